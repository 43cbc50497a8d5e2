"""sia.positions: every sample of an epoch exactly once, whatever the changes."""

import random
import unittest

import helpers  # noqa: F401
from sia.positions import layout_step


def run_epoch(n, configs, rng, drop_last=False):
    """Samples taken by all ranks in one epoch, changing the configuration to
    a random one of ``configs`` after random steps; also checks the slices."""
    taken, position = [], 0
    local, world, micro = rng.choice(configs)
    while True:
        layout = layout_step(position, n, local, world, micro, drop_last)
        if layout is None:
            return taken, position
        assert layout.micro <= micro
        for a in range(layout.micro):
            for r in range(world):
                start, count = layout.slot(a, r)
                assert 0 <= count <= local
                taken += range(start, start + count)
        if layout.full:
            # The reference worker's layout: micro-step a of rank r at
            # P + (a x world + r) x local.
            assert layout.slot(micro - 1, world - 1)[0] == \
                position + ((micro - 1) * world + world - 1) * local
        position += layout.take
        if rng.random() < 0.3:
            local, world, micro = rng.choice(configs)


class Positions(unittest.TestCase):
    def test_exactly_once_across_random_changes(self):
        rng = random.Random(7)
        configs = [(l, w, m) for l in (1, 2, 3, 7, 16) for w in (1, 2, 3, 5)
                   for m in (1, 2, 4)]
        for trial in range(300):
            n = rng.randint(1, 600)
            taken, end = run_epoch(n, configs, rng)
            self.assertEqual(sorted(taken), list(range(n)), trial)
            self.assertEqual(end, n)

    def test_drop_last_leaves_only_a_partial_batch(self):
        taken, end = run_epoch(100, [(4, 3, 2)], random.Random(1), drop_last=True)
        self.assertEqual(sorted(taken), list(range(96)))

    def test_last_partial_batch_is_even_and_uses_few_micro_steps(self):
        layout = layout_step(990, 1000, 4, 2, 3)
        self.assertEqual(layout.micro, 2)
        self.assertEqual([layout.slot(a, r) for a in range(2) for r in range(2)],
                         [(990, 3), (993, 3), (996, 2), (998, 2)])
        layout = layout_step(999, 1000, 8, 3, 1)
        self.assertEqual([layout.slot(0, r)[1] for r in range(3)], [1, 0, 0])


if __name__ == "__main__":
    unittest.main()
