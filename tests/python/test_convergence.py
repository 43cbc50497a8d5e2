"""Learning keeps improving across batch changes: the same script trained at
its batch B0 throughout, and with in-place batch plans B0 -> 4 B0 -> B0 / 2
(one rank; the large batch once as one micro-batch, whose statistics come from
consecutive-step pairs, once as 4 accumulated micro-steps, whose statistics are
replica estimates), each to the same progress (sia's progress counts steps at
B0: AdaScale's scale-invariant iterations), must end at a loss over the whole
dataset within TOLERANCE of the fixed run's, and below the loss at each batch
change.  SGD with momentum 0.9 (the AdaScale default) at a learning rate where
gains taken from pairs ran away before (loss 0.47 against 0.0066), and Adam
(the sqrt rule).  Deterministic: seeded data, model and order, one thread, the
plans written by the script itself after fixed steps."""

import os
import tempfile
import unittest

from helpers import SCENARIO, run

NEEDS_TORCH = True
TOLERANCE = 1.5  # final loss at most this times the fixed-batch run's
PROGRESS = 512  # steps at B0 (B0 = 16: 4 epochs of 2048 samples)
PLANS = {"pairs": "20:64:0,120:8:0", "replicas": "20:16:3,120:8:0"}


def train(optimizer, lr, plans=""):
    """(final loss, losses at the batch changes) of one run."""
    with tempfile.TemporaryDirectory() as d:
        journal = os.path.join(d, "journal")
        status, out, err = run(
            [SCENARIO, "--journal", journal, "--model", "mlp", "--features", "16",
             "--dataset-size", "2048", "--batch-size", "16", "--epochs", "100",
             "--progress", str(PROGRESS), "--optimizer", optimizer, "--lr", str(lr),
             "--plans", plans], timeout=300, SIA_JOB="t", SIA_ROUND=1,
            SIA_CKPT_DIR=os.path.join(d, "ckpt"),
            SIA_BATCH_PLAN=os.path.join(d, "plan"))
        if status != 0:
            raise AssertionError(f"status {status}:\n{err}")
        with open(journal) as f:
            lines = [line.split() for line in f]
    return (float([w for w in lines if w[0] == "loss"][-1][1]),
            [float(w[1]) for w in lines if w[0] == "eval"])


class Convergence(unittest.TestCase):
    def check(self, optimizer, lr):
        fixed, _ = train(optimizer, lr)
        for name, plans in PLANS.items():
            final, at_changes = train(optimizer, lr, plans)
            print(f"{optimizer} lr {lr}: fixed batch {fixed:.4f}, {name} {final:.4f} "
                  f"(at the changes {', '.join(f'{x:.4f}' for x in at_changes)})")
            self.assertLessEqual(final, TOLERANCE * fixed, name)
            self.assertEqual(len(at_changes), 2)
            self.assertLess(final, min(at_changes), name)

    def test_sgd_with_momentum_adascale(self):
        self.check("sgd", 0.15)

    def test_adam_sqrt(self):
        self.check("adam", 0.03)


if __name__ == "__main__":
    unittest.main()
