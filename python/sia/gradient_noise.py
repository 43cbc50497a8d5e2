"""Gradient statistics as Pollux measures them (its gradient noise scale).

From n micro-batch gradients g_1..g_n of one optimizer step (one per replica and
accumulation micro-step, each the mean over ``local_bsz`` samples) and their
mean g::

    local_sqr = mean_i |g_i|^2        total_sqr = |g|^2
    scale     = n x local_bsz / B0
    grad_sqr  = (n x total_sqr - local_sqr) / (n - 1)        |E[g]|^2
    grad_var  = (local_sqr - total_sqr) x scale / (n - 1)    tr(Var[g]) at B0

so grad_var is the variance of a gradient over B0 samples (sia-worker(7)).  With
one gradient per step, two consecutive steps' gradients make the pair.  The
per-step values are smoothed by an exponential average with factor
0.999^scale and bias correction (Qiao et al., "Pollux", OSDI '21); switching
from pair estimates to replica estimates restarts the average.

The AdaScale gain (Johnson et al., "AdaScale SGD", ICML '20) of a step at
batch B, k = B / B0, is r = (grad_var + grad_sqr) / (grad_var / k + grad_sqr):
between 1 and k (k and 1 when k < 1), the step's progress in steps at B0.  It
is only as good as its statistics, and an overestimate is what hurts: a larger
learning rate makes the parameters oscillate, and estimates that see that as
noise ask for a larger rate still.  So :meth:`gain` gives the full r only when
the statistics are *trusted* -- replica estimates (several gradients at the
same parameters), :data:`WARM_STEPS` or more of them since the average began.
Until then, and whenever they come from consecutive-step pairs (two points of
a moving trajectory: with momentum their difference is mostly the movement,
their product often negative, so grad_var swells, grad_sqr falls to 0 and r
to k, which grows the movement), r above 1 is capped at sqrt(k), the rate
that keeps a step's noise (lr^2 tr(Sigma) / B) at B0's.  Below B0 the gain
stays in [k, 1]: a smaller rate than at B0, never unstable.

Promise: :meth:`estimate` gives grad_sqr >= 0 and grad_var >= 1e-6, and never a
non-finite value (a non-finite sample is skipped); :meth:`gain` is between 1
and k, and at most sqrt(k) above 1 until the statistics are trusted.  Plain
values: not thread-safe.
"""

import math

# Replica estimates the average must hold before the gain goes above sqrt(k).
WARM_STEPS = 10


def estimate_gradient(local_sqr, total_sqr, count, scale):
    """(grad_sqr, grad_var) of one step with ``count`` >= 2 gradients."""
    n = float(count)
    return ((n * total_sqr - local_sqr) / (n - 1),
            (local_sqr - total_sqr) * scale / (n - 1))


class GradientNoiseScale:
    def __init__(self):
        self.sqr_biased = self.sqr_unbias = 0.0
        self.var_biased = self.var_unbias = 0.0
        self.pair = False  # the averages come from consecutive-step pairs
        self.count = 0  # samples in the averages

    def _add(self, sqr, var, scale):
        if not (math.isfinite(sqr) and math.isfinite(var)):
            return
        theta = 0.999 ** scale
        self.sqr_biased = theta * self.sqr_biased + (1 - theta) * sqr
        self.sqr_unbias = theta * self.sqr_unbias + (1 - theta)
        self.var_biased = theta * self.var_biased + (1 - theta) * var
        self.var_unbias = theta * self.var_unbias + (1 - theta)
        self.count += 1

    def update(self, local_sqr, total_sqr, count, scale):
        """A step with ``count`` >= 2 micro-batch gradients."""
        if count < 2:
            return
        if self.pair:
            self.__init__()
        self._add(*estimate_gradient(local_sqr, total_sqr, count, scale), scale)

    def update_pair(self, prev_sqr, cur_sqr, pair_sqr, scale_each):
        """A single-gradient step: |g_prev|^2, |g|^2, |(g + g_prev) / 2|^2 (the
        previous step's gradient at the same batch)."""
        self.pair = True
        scale = 2 * scale_each
        self._add(*estimate_gradient((prev_sqr + cur_sqr) / 2, pair_sqr, 2, scale),
                  scale)

    def estimate(self):
        """(grad_sqr, grad_var), or None before the first estimate."""
        if self.sqr_unbias <= 0 or self.var_unbias <= 0:
            return None
        return (max(self.sqr_biased / self.sqr_unbias, 0.0),
                max(self.var_biased / self.var_unbias, 1e-6))

    def trusted(self):
        """The averages are replica estimates, WARM_STEPS or more of them."""
        return not self.pair and self.count >= WARM_STEPS

    def gain(self, batch, init_batch):
        """Progress of one step at ``batch``, in steps at B0: the AdaScale gain,
        capped at sqrt(k) above 1 until the statistics are trusted."""
        est = self.estimate()
        if est is None or init_batch <= 0:
            return 1.0
        sqr, var = est
        k = batch / init_batch
        denom = var / k + sqr
        r = (var + sqr) / denom if denom > 0 else 1.0
        if k > 1 and not self.trusted():
            r = min(r, math.sqrt(k))
        return r

    def state_dict(self):
        return {"sqr_biased": self.sqr_biased, "sqr_unbias": self.sqr_unbias,
                "var_biased": self.var_biased, "var_unbias": self.var_unbias,
                "pair": self.pair, "count": self.count}

    def load_state_dict(self, state):
        self.__init__()  # a checkpoint without "count" is not yet trusted
        for key, value in state.items():
            setattr(self, key, value)
