"""examples/pytorch/ddp: a torchrun/DDP script and the same script converted as
sia-torch(7) says -- at most ten lines changed, and both train on two CPU ranks
(gloo), the converted one under the worker contract."""

import difflib
import os
import re
import tempfile
import unittest

from helpers import EXAMPLES, Job, reports

NEEDS_TORCH = True
DDP = os.path.join(EXAMPLES, "ddp", "train_ddp.py")
SIA = os.path.join(EXAMPLES, "ddp", "train_sia.py")
EPOCHS = 4


def hunks(before, after):
    """(removed, added) lines of each hunk of the diff between two files."""
    with open(before) as a, open(after) as b:
        matcher = difflib.SequenceMatcher(None, a.readlines(), b.readlines())
    return [(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"]


def epoch_losses(log):
    """The per-epoch average losses rank 0 printed."""
    return [float(m) for m in re.findall(r"^epoch \d+: loss ([0-9.]+),", log, re.M)]


class DdpExample(unittest.TestCase):
    def test_at_most_10_changed_lines(self):
        h = hunks(DDP, SIA)
        # A replaced line is one changed line; removed + added counts it twice.
        changed = sum(max(r, a) for r, a in h)
        both = sum(r + a for r, a in h)
        print(f"train_ddp.py -> train_sia.py: {changed} changed lines "
              f"({both} removed + added)")
        self.assertLessEqual(changed, 10)
        with open(SIA) as f:
            converted = f.read()
        for gone in ("init_process_group", "DDP(", "DistributedSampler(", "set_epoch"):
            self.assertNotIn(gone, converted)

    def train(self, script, **env):
        with tempfile.TemporaryDirectory() as d:
            job = Job(d, [script, "--epochs", str(EPOCHS), "--dataset-size", "2048"], 2,
                      **env)
            self.assertEqual(job.wait(180), [0, 0], job.logs())
            return job.log(0), job.logs()

    def check_learns(self, log, logs):
        losses = epoch_losses(log)
        self.assertEqual(len(losses), EPOCHS, logs)
        self.assertLess(losses[-1], 0.7 * losses[0], losses)

    def test_the_ddp_script_trains_on_two_ranks(self):
        log, logs = self.train(DDP)
        self.check_learns(log, logs)

    def test_the_converted_script_trains_under_sia(self):
        with tempfile.TemporaryDirectory() as d:
            report = os.path.join(d, "r.jsonl")
            log, logs = self.train(SIA, SIA_REPORT=report, SIA_REPORT_INTERVAL=0.2,
                                      SIA_CKPT_DIR=os.path.join(d, "ckpt"), SIA_JOB="ddp",
                                      SIA_LOCAL_BSZ=32, SIA_ACCUM_STEPS=1)
            self.check_learns(log, logs)
            self.assertIn("2 ranks", log)
            r = reports(report)
            # 2048 samples an epoch at batch 32 x 2 ranks x 2 micro-steps: 16 steps.
            self.assertEqual((r[-1]["reason"], r[-1]["step"]), ("done", 16 * EPOCHS), r[-1])
            self.assertTrue(all(x["world_size"] == 2 for x in r if "world_size" in x))


if __name__ == "__main__":
    unittest.main()
