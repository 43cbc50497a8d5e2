"""One process of sia.torch: configuration errors, restores, learning-rate
scaling with accumulation and a scheduler, profiling."""

import os
import tempfile
import textwrap
import unittest

from helpers import SCENARIO, reports, run

NEEDS_TORCH = True

LR_SCRIPT = textwrap.dedent("""
    import torch, sia.torch
    from torch import nn
    from torch.utils.data import TensorDataset
    torch.set_num_threads(1)
    m = nn.Linear(1, 1, bias=False)
    nn.init.zeros_(m.weight)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    model = sia.torch.wrap(m, opt, sched, lr_scaling=RULE)
    data = TensorDataset(torch.ones(64, 1), torch.ones(64, 1))
    loader = sia.torch.ElasticDataLoader(data, batch_size=8)
    for epoch in sia.torch.remaining_epochs_until(1, max_steps=2):
        for x, y in loader:
            opt.zero_grad()
            loss = 0.5 * ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
            print(round(m.weight.item(), 6), opt.param_groups[0]["lr"])
""")


class Single(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ckpt = os.path.join(self.tmp.name, "ckpt")
        self.report = os.path.join(self.tmp.name, "r.jsonl")

    def tearDown(self):
        self.tmp.cleanup()

    def scenario(self, *args, **env):
        return run([SCENARIO] + list(args),
                   **dict(dict(SIA_CKPT_DIR=self.ckpt, SIA_REPORT=self.report), **env))

    def test_bad_variable_is_one_line_and_78(self):
        status, out, err = self.scenario(SIA_LOCAL_BSZ="x")
        self.assertEqual(status, 78)
        self.assertEqual(err, 'sia.torch: error: SIA_LOCAL_BSZ: expected a positive '
                              'integer, got "x"\n')

    def test_restore_without_checkpoint_starts_at_step_0(self):
        status, out, err = self.scenario("--steps", "3", SIA_RESTORE=1)
        self.assertEqual(status, 0, err)
        self.assertIn(f"SIA_RESTORE=1 but {self.ckpt} has no checkpoint: starting "
                      "from step 0", err)
        self.assertEqual(reports(self.report)[-1]["step"], 3)

    def test_restore_continues_falls_back_and_corruption_is_65(self):
        self.assertEqual(self.scenario("--steps", "4")[0], 0)
        status, out, err = self.scenario("--steps", "6", SIA_RESTORE=1)
        self.assertEqual(status, 0, err)
        self.assertIn("restored step 4", err)
        self.assertEqual(reports(self.report)[-1]["step"], 6)
        path = os.path.join(self.ckpt, "ckpt-000000000006.pt")
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 7)
        # The checkpoint latest names is damaged: the newest intact one, said aloud.
        status, out, err = self.scenario("--steps", "8", SIA_RESTORE=1)
        self.assertEqual(status, 0, err)
        self.assertIn("restoring the newest intact checkpoint, ckpt-000000000004.pt", err)
        self.assertIn("restored step 4", err)
        # None intact: 65, one line.
        for name in os.listdir(self.ckpt):
            if name.startswith("ckpt-"):
                with open(os.path.join(self.ckpt, name), "r+b") as f:
                    f.truncate(os.path.getsize(f.name) - 7)
        path = os.path.join(self.ckpt, "ckpt-000000000008.pt")
        status, out, err = self.scenario("--steps", "10", SIA_RESTORE=1)
        self.assertEqual(status, 65)
        [line] = err.splitlines()
        prefix = f"sia.torch: error: {path}: corrupt checkpoint: "
        self.assertTrue(line.startswith(prefix), line)
        self.assertTrue(line.endswith("(truncated)"), line)

    def test_checkpoint_every_n_steps(self):
        status, out, err = self.scenario("--steps", "7", "--checkpoint-steps", "3",
                                         SIA_TORCH_DEBUG=1)
        self.assertEqual(status, 0, err)
        saved = [line.split()[5].rstrip(":") for line in err.splitlines()
                 if "state crc" in line]
        self.assertEqual(saved, ["3", "6", "7"])
        self.assertEqual(sorted(e for e in os.listdir(self.ckpt) if e[0] != "."),
                         ["ckpt-000000000006.pt", "ckpt-000000000007.pt", "latest"])

    def lr_run(self, rule):
        status, out, err = run(["-c", LR_SCRIPT.replace("RULE", repr(rule))],
                               SIA_LOCAL_BSZ=8, SIA_ACCUM_STEPS=3)
        self.assertEqual(status, 0, err)
        return [tuple(map(float, line.split())) for line in out.splitlines()]

    def test_lr_scaling_with_accumulation_and_scheduler(self):
        # Batch 32 at B0 8: sqrt doubles the rate, linear quadruples it; the
        # scheduler halves it after each optimizer step (4 micro-steps).
        # Step 1: grad -1, w = 0.1 f; step 2: grad w - 1, at lr 0.05 f.
        for rule, f in (("sqrt", 2.0), ("linear", 4.0), ("none", 1.0)):
            w1 = 0.1 * f
            w2 = w1 + 0.05 * f * (1 - w1)
            w1, w2 = round(w1, 6), round(w2, 6)
            self.assertEqual(self.lr_run(rule), [(0.0, 0.1)] * 3 + [(w1, 0.05)] * 4
                             + [(w2, 0.025)])

    def test_profile_mode(self):
        status, out, err = self.scenario(SIA_PROFILE_STEPS=4, SIA_LOCAL_BSZ=8,
                                         SIA_CKPT_DIR="")
        self.assertEqual(status, 0, err)
        [r] = reports(self.report)
        self.assertEqual((r["reason"], r["step"], r["local_bsz"]), ("profile", 7, 8))
        self.assertGreater(r["step_time"], r["sync_time"])
        self.assertIn("grad_var", r)
        self.assertFalse(os.path.exists(self.ckpt))
        status, out, err = self.scenario("--oom-above", "4", SIA_PROFILE_STEPS=4,
                                         SIA_LOCAL_BSZ=8)
        self.assertEqual(status, 71)
        self.assertIn("out of memory at local batch 8", err)


if __name__ == "__main__":
    unittest.main()
