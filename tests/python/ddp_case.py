"""Shared by test_ddp_statistics and test_ddp_training: runs of the user's DDP
script (ddp_user.py) in its two forms, and the comparisons of their results."""

import os
import re
import tempfile
import unittest

import torch

from helpers import HERE, Job, reports

USER = os.path.join(HERE, "ddp_user.py")
BATCH, SIZE, EPOCHS, LR = 32, 256, 3, 0.1  # 8 steps an epoch
ARGS = ["--epochs", str(EPOCHS), "--batch-size", str(BATCH), "--dataset-size", str(SIZE),
        "--lr", str(LR)]


def epoch_losses(log):
    """{epoch: the average loss rank 0 printed}."""
    return {int(e): float(v)
            for e, v in re.findall(r"^epoch (\d+): loss (\S+)$", log, re.M)}


class DdpCase(unittest.TestCase):
    """A temporary directory; sia.torch's checkpoints and reports in it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.runs = 0

    def tearDown(self):
        self.tmp.cleanup()

    def job(self, mode, world, *args, statuses=None, **env):
        """Runs ddp_user.py on ``world`` ranks: (rank 0's output, the saved
        model state or None when the run saved none)."""
        self.runs += 1
        d = os.path.join(self.dir, f"run-{self.runs}")
        os.mkdir(d)
        save = os.path.join(d, "model.pt")
        job = Job(d, [USER, "--mode", mode, "--save", save] + ARGS + list(args), world,
                  **env)
        self.assertEqual(job.wait(240), statuses or [0] * world, job.logs())
        return job.log(0), torch.load(save) if os.path.exists(save) else None

    def sia(self, world, *args, **env):
        """A sia.torch run as a job (round 1 unless ``env`` says otherwise)."""
        env = dict(dict(SIA_JOB="ddp", SIA_ROUND=1,
                        SIA_CKPT_DIR=os.path.join(self.dir, "ckpt"),
                        SIA_REPORT=os.path.join(self.dir, "r.jsonl")), **env)
        return self.job("sia", world, *args, **env)

    def reports(self):
        return reports(os.path.join(self.dir, "r.jsonl"))

    def assert_same_model(self, got, want):
        self.assertEqual(list(got), list(want))
        for name, value in want.items():
            diff = (got[name] - value).abs().max().item()
            self.assertTrue(torch.allclose(got[name], value, rtol=1e-4, atol=1e-5),
                            f"{name}: differs by up to {diff:.3g}")

    def assert_same_losses(self, got, want, epochs):
        for e in epochs:
            self.assertIn(e, got, got)
            self.assertAlmostEqual(got[e], want[e], delta=1e-5 * want[e],
                                   msg=f"epoch {e}")
