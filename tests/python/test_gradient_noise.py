"""Gradient statistics: the estimator, and sia.torch measuring a problem whose
gradient mean and variance are known.

Linear regression y = x . w* + e, x ~ N(0, I_d), |w*| = 1, e ~ N(0, s^2), loss
0.5 (x . w - y)^2 at w = 0 (learning rate 0: the weights stay there): the
per-sample gradient -x y has mean -w* and covariance (1 + s^2) I + w* w*^T, so
|G|^2 = 1 and tr(Sigma) = d (1 + s^2) + 1; grad_var at B0 is tr(Sigma) / B0.
"""

import os
import tempfile
import unittest

from helpers import SCENARIO, reports, run
from sia.gradient_noise import WARM_STEPS, GradientNoiseScale, estimate_gradient

NEEDS_TORCH = True
D, NOISE, B0 = 8, 1.0, 32
TRUE_SQR, TRUE_VAR = 1.0, (D * (1 + NOISE ** 2) + 1) / B0


class Estimator(unittest.TestCase):
    def test_formulas(self):
        # Two gradients (1, 0) and (0, 1): local 1, total 0.5.
        self.assertEqual(estimate_gradient(1.0, 0.5, 2, 2.0), (0.0, 1.0))

    def test_bounds_and_bias_correction(self):
        g = GradientNoiseScale()
        self.assertIsNone(g.estimate())
        self.assertEqual(g.gain(64, 32), 1.0)
        g.update(1.0, 2.0, 4, 1.0)  # negative variance sample
        sqr, var = g.estimate()
        self.assertEqual(var, 1e-6)
        g = GradientNoiseScale()
        g.update(3.0, 1.0, 2, 1.0)  # sqr -1 (shown as 0), var 2
        self.assertEqual(g.estimate(), (0.0, 2.0))
        g.update(float("nan"), 1.0, 2, 1.0)  # skipped
        self.assertEqual(g.estimate(), (0.0, 2.0))

    def test_gain(self):
        g = GradientNoiseScale()
        g.update(2.0, 1.0, 2, 1.0)  # sqr 0, var 1: pure noise, gain = k ...
        self.assertAlmostEqual(g.gain(16, 32), 0.5)
        self.assertAlmostEqual(g.gain(64, 32), 2 ** 0.5)  # ... once trusted
        for _ in range(WARM_STEPS - 1):
            g.update(2.0, 1.0, 2, 1.0)
        self.assertTrue(g.trusted())
        self.assertAlmostEqual(g.gain(64, 32), 2.0)
        g.update(5.0, 3.0, 2, 1.0)  # sqr 1, var 2: (2 + 1) / (2 / 4 + 1)
        self.assertGreater(g.gain(128, 32), 1.0)
        self.assertLess(g.gain(128, 32), 4.0)

    def test_pairs_never_scale_above_sqrt_k(self):
        # Consecutive gradients pointing apart (an oscillation): grad_sqr < 0,
        # read as pure noise; the gain above 1 stays at sqrt(k) however many.
        g = GradientNoiseScale()
        for _ in range(3 * WARM_STEPS):
            g.update_pair(1.0, 1.0, 0.1, 1.0)
        self.assertEqual(g.estimate()[0], 0.0)
        self.assertFalse(g.trusted())
        self.assertAlmostEqual(g.gain(128, 32), 2.0)
        self.assertAlmostEqual(g.gain(16, 32), 0.5)
        # Replica estimates restart the average, and are trusted once warm.
        for _ in range(WARM_STEPS):
            g.update(2.0, 1.0, 2, 1.0)
        self.assertAlmostEqual(g.gain(128, 32), 4.0)

    def test_state_round_trip(self):
        g = GradientNoiseScale()
        g.update_pair(1.0, 1.2, 0.9, 0.5)
        h = GradientNoiseScale()
        h.load_state_dict(g.state_dict())
        self.assertEqual(h.estimate(), g.estimate())
        self.assertTrue(h.pair)
        self.assertEqual(h.count, 1)
        old = {k: v for k, v in g.state_dict().items() if k != "count"}
        h.load_state_dict(old)  # a checkpoint from before "count": not trusted
        self.assertEqual(h.count, 0)


class Measured(unittest.TestCase):
    def measure(self, **env):
        with tempfile.TemporaryDirectory() as d:
            report = os.path.join(d, "r.jsonl")
            status, out, err = run(
                [SCENARIO, "--model", "linear", "--optimizer", "sgd", "--lr", "0",
                 "--features", str(D), "--noise", str(NOISE), "--dataset-size",
                 "40000", "--batch-size", str(B0), "--steps", "1500"],
                SIA_REPORT=report, **env)
            self.assertEqual(status, 0, err)
            last = reports(report)[-1]
        return last["grad_sqr"], last["grad_var"]

    def check(self, sqr, var):
        print(f"grad_sqr {sqr:.4f} (true {TRUE_SQR}), grad_var {var:.4f} "
              f"(true {TRUE_VAR:.4f})")
        self.assertLess(abs(sqr - TRUE_SQR) / TRUE_SQR, 0.2)
        self.assertLess(abs(var - TRUE_VAR) / TRUE_VAR, 0.2)

    def test_accumulated_micro_batches(self):
        self.check(*self.measure(SIA_LOCAL_BSZ=16, SIA_ACCUM_STEPS=3))

    def test_consecutive_steps_of_one_replica(self):
        self.check(*self.measure(SIA_LOCAL_BSZ=32))


if __name__ == "__main__":
    unittest.main()
