"""The gradient statistics sia.torch gathers in its DistributedDataParallel
communication hook (and without DDP, for one rank) equal those computed by
hand from the per-rank, per-micro-step gradients, and the update is SGD's on
their mean: two steps of the user's DDP script (ddp_user.py) on 2 CPU ranks
(gloo), with and without gradient accumulation.  The first step reduces the
gradient in one bucket, the second in the two DDP rebuilt them into."""

import unittest

import torch
import torch.nn.functional as F

from ddp_case import BATCH, LR, SIZE, DdpCase  # before sia
import ddp_user

NEEDS_TORCH = True
MOMENTUM = 0.9  # ddp_user.py's SGD


def step_gradients(model, start, world, local_bsz, micro):
    """The flat gradients of the micro-batches of the step that starts at
    sample ``start``, as sia.torch lays them out (sia-torch(7), Data
    positions): micro-step a of rank r takes the samples at start + (a x
    world + r) x local_bsz."""
    x, y = ddp_user.build_data(SIZE).tensors
    out = []
    for a in range(micro):
        for r in range(world):
            i = start + (a * world + r) * local_bsz
            model.zero_grad()
            F.cross_entropy(model(x[i:i + local_bsz]), y[i:i + local_bsz]).backward()
            out.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()])
                       .double())
    return out


def by_hand(world, local_bsz, micro, steps):
    """([(grad_sqr, grad_var) reported after each step], the model after them):
    Pollux's estimator over each step's micro-batch gradients, its average
    (factor 0.999^scale, bias-corrected; sia-torch(7), Gradient statistics),
    and SGD with momentum on the mean gradient."""
    model = ddp_user.build_model()
    params = list(model.parameters())
    n, scale = world * micro, world * micro * local_bsz / BATCH
    theta = 0.999 ** scale
    sums, weight, estimates, buf = [0.0, 0.0], 0.0, [], None
    for k in range(steps):
        grads = step_gradients(model, k * BATCH, world, local_bsz, micro)
        mean = sum(grads) / n
        local = sum(float(g.dot(g)) for g in grads) / n
        total = float(mean.dot(mean))
        sample = ((n * total - local) / (n - 1), (local - total) * scale / (n - 1))
        sums = [theta * s + (1 - theta) * x for s, x in zip(sums, sample)]
        weight = theta * weight + (1 - theta)
        estimates.append((sums[0] / weight, sums[1] / weight))
        buf = mean if buf is None else MOMENTUM * buf + mean
        with torch.no_grad():
            offset = 0
            for p in params:
                p -= LR * buf[offset:offset + p.numel()].view_as(p).float()
                offset += p.numel()
    return estimates, model.state_dict()


class Statistics(DdpCase):
    def check(self, world, local_bsz, micro):
        # A report after every step.
        _, model = self.sia(world, "--steps", "2", SIA_LOCAL_BSZ=local_bsz,
                            SIA_ACCUM_STEPS=micro - 1, SIA_REPORT_INTERVAL=1e-9)
        got = {r["step"]: r for r in self.reports()}
        self.assertEqual((got[2]["reason"], got[2]["batch_size"]), ("done", BATCH))
        want, want_model = by_hand(world, local_bsz, micro, 2)
        for step, (sqr, var) in enumerate(want, 1):
            r = got[step]
            print(f"{world} rank(s) x {micro} micro-step(s), step {step}: grad_sqr "
                  f"{r['grad_sqr']:.9g} (by hand {sqr:.9g}), grad_var "
                  f"{r['grad_var']:.9g} (by hand {var:.9g})")
            self.assertGreater(sqr, 0)  # above the estimate's floor
            self.assertAlmostEqual(r["grad_sqr"], sqr, delta=1e-4 * sqr)
            self.assertAlmostEqual(r["grad_var"], var, delta=1e-4 * var)
            self.assertAlmostEqual(r["progress"], step)  # the batch is B0: gain 1
        self.assert_same_model(model, want_model)

    def test_two_ranks(self):
        self.check(2, 16, 1)

    def test_two_ranks_with_accumulation(self):
        self.check(2, 8, 2)

    def test_one_rank_with_accumulation(self):
        self.check(1, 8, 4)


if __name__ == "__main__":
    unittest.main()
