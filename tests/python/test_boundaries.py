"""Stops end at a step boundary of the script's loop, and restores on an epoch
boundary start the next epoch: a SIGTERM stop at every position of an epoch
(its first batch, the middle, its last batch, the next epoch's first), each
restored with another world size and batch; drop_last; a rung on an epoch's
end.  The script's own bookkeeping (tests/python/scenario.py --journal) must
run exactly once for every step, its scheduler must have stepped once per
optimizer step across the restart, and no epoch may be empty."""

import os
import tempfile
import unittest

from helpers import SCENARIO, Job, reports

NEEDS_TORCH = True

N = 96  # samples per epoch: 6 steps of 16, 4 of 24
EPOCHS = 3


class Boundaries(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.ckpt = os.path.join(self.dir, "ckpt")
        self.report = os.path.join(self.dir, "reports.jsonl")
        self.journal = os.path.join(self.dir, "journal")

    def tearDown(self):
        self.tmp.cleanup()

    def round(self, round, world, local, args, statuses, **env):
        job = Job(self.dir, [SCENARIO, "--journal", self.journal, "--epochs",
                             str(EPOCHS), "--dataset-size", str(args.pop(0))] + args,
                  world, SIA_JOB="t", SIA_ROUND=round, SIA_CKPT_DIR=self.ckpt,
                  SIA_REPORT=self.report, SIA_LOCAL_BSZ=local,
                  SIA_RESTORE=int(round > 1), **env)
        self.assertEqual(job.wait(), statuses, job.logs())
        return job

    def lines(self):
        with open(self.journal) as f:
            return [line.split() for line in f]

    def assert_bookkeeping(self, rounds=2):
        """Every step's code after optimizer.step() ran exactly once, the
        scheduler stepped with every optimizer step (also across the restart),
        every epoch's mean had batches; returns (steps, epochs' batches)."""
        lines = self.lines()
        steps = [int(w[1]) for w in lines if w[0] == "step"]
        self.assertEqual(steps, list(range(1, len(steps) + 1)), lines)
        for w in lines:
            if w[0] in ("start", "step", "end"):
                self.assertEqual(w[1], w[2], f"scheduler last_epoch != step: {w}")
        starts = [int(w[1]) for w in lines if w[0] == "start"]
        self.assertEqual(len(starts), rounds)
        ends = [int(w[1]) for w in lines if w[0] == "end"]
        self.assertEqual(ends, [len(steps)])
        epochs = [(int(w[1]), int(w[2])) for w in lines if w[0] == "epoch"]
        self.assertEqual([e for e, _ in epochs], sorted({e for e, _ in epochs}))
        self.assertEqual(epochs[-1][0], EPOCHS - 1)
        self.assertTrue(all(b > 0 for _, b in epochs), epochs)
        return len(steps), dict(epochs), starts

    def test_sigterm_at_every_position_then_another_world(self):
        # Round 1: 2 ranks x 8 (6 steps an epoch); round 2: 1 rank x 24 (4 steps).
        for stop in (1, 3, 6, 7):
            with self.subTest(stop=stop):
                self.tearDown()
                self.setUp()
                self.round(1, 2, 8, [N, "--term-at", str(stop)], [75, 75])
                last = reports(self.report)[-1]
                self.assertEqual((last["reason"], last["step"]), ("preempted", stop))
                boundary = stop % 6 == 0
                self.assertEqual((last["epoch"], last["samples"] - last["epoch"] * N),
                                 (stop // 6, 0 if boundary else (stop % 6) * 16))
                self.round(2, 1, 24, [N], [0])
                steps, epochs, starts = self.assert_bookkeeping()
                self.assertEqual(starts, [0, stop])
                self.assertEqual(reports(self.report)[-1]["samples"], EPOCHS * N)
                # The epoch the stop cut short is finished at the new batch; one
                # that ended on the stop is not run again, nor run empty.
                left = 0 if boundary else -(-(N - (stop % 6) * 16) // 24)
                whole = EPOCHS - stop // 6 - (0 if boundary else 1)
                self.assertEqual(steps, stop + left + 4 * whole)
                if boundary:
                    self.assertEqual(epochs[stop // 6 - 1], 6)

    def test_drop_last_restore_past_the_last_full_batch(self):
        # 100 samples, drop_last: 6 steps of 16; stopped at 80, the 20 left are
        # fewer than the new batch of 24: the restore starts epoch 1.
        self.round(1, 2, 8, [100, "--drop-last", "--term-at", "5"], [75, 75])
        self.round(2, 1, 24, [100, "--drop-last"], [0])
        steps, epochs, _ = self.assert_bookkeeping()
        self.assertEqual(sorted(epochs), [1, 2])
        self.assertEqual(steps, 5 + 2 * 4)

    def test_a_rung_on_an_epoch_boundary(self):
        # A third of 3 epochs is the end of epoch 0: the trial stops after the
        # script's end-of-epoch code, and the next phase trains epoch 1.
        self.round(1, 2, 8, [N], [75, 75], SIA_STOP_FRACTION=1 / 3)
        last = reports(self.report)[-1]
        self.assertEqual((last["reason"], last["step"], last["epoch"]), ("rung", 6, 1))
        self.assertIn(["epoch", "0", "6"], [w[:3] for w in self.lines()])
        self.round(2, 1, 16, [N], [75], SIA_STOP_FRACTION=2 / 3)
        self.round(3, 1, 16, [N], [0])
        steps, epochs, starts = self.assert_bookkeeping(rounds=3)
        self.assertEqual((steps, epochs, starts), (18, {0: 6, 1: 6, 2: 6}, [0, 6, 12]))


if __name__ == "__main__":
    unittest.main()
