"""The gradient reduction over DistributedDataParallel: a step's update and
gradient statistics do not depend on how its gradients are split between
ranks (DDP's communication hook) and micro-steps (no_sync and the step's
running sum), an uneven last batch of an epoch included."""

import io
import os
import tempfile
import unittest

import torch

from helpers import SCENARIO, Job, reports  # before sia
from sia import checkpoint

NEEDS_TORCH = True
ARGS = ["--model", "mlp", "--optimizer", "sgd", "--lr", "0.05", "--batch-size", "16",
        "--epochs", "2"]


def train(world, local_bsz, accum_steps, *args):
    """(the done report, the final model state) of ARGS + ``args`` at batch 32."""
    with tempfile.TemporaryDirectory() as d:
        report, ckpt = os.path.join(d, "r.jsonl"), os.path.join(d, "ckpt")
        job = Job(d, [SCENARIO] + ARGS + list(args), world, SIA_JOB="t", SIA_ROUND=1,
                  SIA_REPORT=report, SIA_CKPT_DIR=ckpt, SIA_LOCAL_BSZ=local_bsz,
                  SIA_ACCUM_STEPS=accum_steps)
        statuses = job.wait(240)
        if statuses != [0] * world:
            raise AssertionError(f"statuses {statuses}:\n{job.logs()}")
        _, payload = checkpoint.load_latest(ckpt)
        return reports(report)[-1], torch.load(io.BytesIO(payload))["model"]


class Reduction(unittest.TestCase):
    def assert_equal_models(self, one, two):
        for name, value in one.items():
            self.assertTrue(torch.allclose(value, two[name], rtol=1e-5, atol=1e-6), name)

    def test_two_ranks_with_accumulation_equal_one_rank(self):
        # 1024 samples: 32 full steps an epoch, each with AdaScale's gain.
        one_report, one_model = train(1, 8, 3, "--dataset-size", "1024")
        two_report, two_model = train(2, 8, 1, "--dataset-size", "1024")
        for r in (one_report, two_report):
            self.assertEqual((r["reason"], r["step"], r["batch_size"]), ("done", 64, 32))
        for key in ("grad_sqr", "grad_var", "progress"):
            a, b = one_report[key], two_report[key]
            print(f"{key}: one rank x 4 micro-steps {a:.9g}, two ranks x 2 {b:.9g}")
            self.assertGreater(a, 0)
            self.assertLess(abs(a - b) / a, 1e-5, key)
        self.assert_equal_models(one_model, two_model)

    def test_uneven_last_batches(self):
        # 1000 samples: each epoch ends with a step of 8 (one slice of 8 on one
        # rank, two of 4 on two: not a full step there, so the statistics and
        # the gain differ; the mean gradient does not).
        args = ("--dataset-size", "1000", "--lr-scaling", "none")
        one_report, one_model = train(1, 8, 3, *args)
        two_report, two_model = train(2, 8, 1, *args)
        self.assertEqual((one_report["step"], two_report["step"]), (64, 64))
        self.assert_equal_models(one_model, two_model)


if __name__ == "__main__":
    unittest.main()
