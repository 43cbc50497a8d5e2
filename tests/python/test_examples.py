"""examples/pytorch: each sia script is its plain script plus a few lines, and
trains (the loss falls) under the contract."""

import difflib
import os
import tempfile
import unittest

from helpers import EXAMPLES, reports, run

NEEDS_TORCH = True
PAIRS = [("cifar_cnn.py", "cifar_cnn_sia.py"), ("adam_mlp.py", "adam_mlp_sia.py")]


def changed_lines(plain, sia):
    """Lines removed plus lines added between the two files."""
    with open(os.path.join(EXAMPLES, plain)) as a:
        before = a.readlines()
    with open(os.path.join(EXAMPLES, sia)) as b:
        after = b.readlines()
    diff = difflib.unified_diff(before, after, n=0)
    return sum(1 for line in diff if line[:1] in "+-"
               and not line.startswith(("+++", "---")))


class Examples(unittest.TestCase):
    def test_the_diff_is_at_most_10_lines(self):
        for plain, sia in PAIRS:
            n = changed_lines(plain, sia)
            print(f"{plain} -> {sia}: {n} changed lines")
            self.assertLessEqual(n, 10)

    def train(self, script, steps, **env):
        with tempfile.TemporaryDirectory() as d:
            report = os.path.join(d, "r.jsonl")
            status, out, err = run([os.path.join(EXAMPLES, script), "--steps",
                                    str(steps)], SIA_REPORT=report,
                                   SIA_REPORT_INTERVAL=0.2,
                                   SIA_CKPT_DIR=os.path.join(d, "ckpt"), **env)
            self.assertEqual(status, 0, err)
            return reports(report)

    def check_learns(self, r, steps):
        # Reports may each cover one step (a slow machine) or many: compare the
        # first with the mean of the last quarter.
        losses = [x["loss"] for x in r if "loss" in x]
        tail = losses[-max(1, len(losses) // 4):]
        self.assertEqual((r[-1]["reason"], r[-1]["step"]), ("done", steps))
        self.assertLess(sum(tail) / len(tail), 0.85 * losses[0], losses)

    def test_cnn_learns(self):
        r = self.train("cifar_cnn_sia.py", 300, SIA_LOCAL_BSZ=32, SIA_ACCUM_STEPS=1)
        self.check_learns(r, 300)

    def test_adam_mlp_learns(self):
        r = self.train("adam_mlp_sia.py", 400)
        self.check_learns(r, 400)

    def test_plain_scripts_run(self):
        for plain, _ in PAIRS:
            status, out, err = run([os.path.join(EXAMPLES, plain), "--steps", "5"])
            self.assertEqual(status, 0, err)


if __name__ == "__main__":
    unittest.main()
