"""A user's DDP script (ddp_user.py: their model wrapped by the library, a
StepLR stepped per epoch, the epoch's average loss) converted to sia.torch
trains to the same parameters and epoch averages as the plain DDP script on
the same batches, on 2 CPU ranks (gloo): without and with gradient
accumulation, as one process without the contract's variables, and stopped
at a rung, checkpointed and resumed as one rank with another local batch."""

import os
import unittest

import torch

from ddp_case import ARGS, EPOCHS, USER, DdpCase, epoch_losses  # before sia
from helpers import run

NEEDS_TORCH = True


class Training(DdpCase):
    reference = None  # plain DDP's (output, model), run once

    def setUp(self):
        super().setUp()
        if Training.reference is None:
            Training.reference = self.job("ddp", 2)
        log, self.ddp_model = Training.reference
        self.ddp_losses = epoch_losses(log)
        self.assertEqual(sorted(self.ddp_losses), list(range(EPOCHS)), log)
        self.assertLess(self.ddp_losses[EPOCHS - 1], self.ddp_losses[0])

    def test_as_a_job(self):
        cases = {"2 ranks x 16": dict(SIA_LOCAL_BSZ=16),
                 "2 ranks x 8 x 2 micro-steps": dict(SIA_LOCAL_BSZ=8, SIA_ACCUM_STEPS=1)}
        for round, (what, env) in enumerate(cases.items(), 1):
            with self.subTest(what):
                log, model = self.sia(2, SIA_ROUND=round, **env)
                self.assert_same_model(model, self.ddp_model)
                self.assert_same_losses(epoch_losses(log), self.ddp_losses,
                                        range(EPOCHS))

    def test_one_process_without_the_contract(self):
        save = os.path.join(self.dir, "alone.pt")
        status, out, err = run([USER, "--mode", "sia", "--save", save] + ARGS)
        self.assertEqual(status, 0, err)
        self.assert_same_model(torch.load(save), self.ddp_model)
        self.assert_same_losses(epoch_losses(out), self.ddp_losses, range(EPOCHS))

    def test_stopped_and_resumed_as_one_rank(self):
        # A rung at half the training: step 12 of 24, in the middle of epoch 1.
        _, model = self.sia(2, SIA_LOCAL_BSZ=16, SIA_STOP_FRACTION=0.5,
                            statuses=[75, 75])
        self.assertIsNone(model)
        last = self.reports()[-1]
        self.assertEqual((last["reason"], last["step"], last["epoch"]), ("rung", 12, 1))
        log, model = self.sia(1, SIA_ROUND=2, SIA_RESTORE=1, SIA_LOCAL_BSZ=8,
                              SIA_ACCUM_STEPS=3)
        self.assertIn("restored step 12 (epoch 1, 128 samples into it)", log)
        done = self.reports()[-1]
        self.assertEqual((done["reason"], done["step"], done["world_size"]),
                         ("done", 24, 1))
        self.assert_same_model(model, self.ddp_model)
        # Epoch 1 began before the stop: the script's own sum began again with it.
        self.assert_same_losses(epoch_losses(log), self.ddp_losses, [2])


if __name__ == "__main__":
    unittest.main()
