"""sia.contract: the worker contract's environment."""

import unittest

import helpers  # noqa: F401  (puts python/ on the path)
from sia.batch_setting import BatchSetting
from sia.contract import read_contract
from sia.status import CONFIG, SiaError


class Contract(unittest.TestCase):
    def error(self, env):
        with self.assertRaises(SiaError) as cm:
            read_contract(env)
        self.assertEqual(cm.exception.status, CONFIG)
        return cm.exception.message

    def test_nothing_set_is_one_rank_with_the_scripts_batch(self):
        c = read_contract({})
        self.assertEqual((c.rank, c.world_size, c.local_bsz, c.batch_size),
                         (0, 1, None, None))
        self.assertEqual((c.ckpt_dir, c.report, c.restore, c.report_interval),
                         ("", "", False, 30.0))
        self.assertEqual((c.rendezvous_timeout, c.device), (300.0, "auto"))

    def test_full_contract(self):
        c = read_contract({
            "RANK": "2", "LOCAL_RANK": "0", "WORLD_SIZE": "4",
            "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "29500",
            "SIA_JOB": "j1", "SIA_ROUND": "7", "SIA_GPU_TYPE": "t4",
            "SIA_BATCH_SIZE": "256", "SIA_LOCAL_BSZ": "32", "SIA_ACCUM_STEPS": "1",
            "SIA_CKPT_DIR": "/c", "SIA_RESTORE": "1", "SIA_REPORT": "/r",
            "SIA_REPORT_INTERVAL": "0.5", "SIA_INIT_BATCH_SIZE": "64",
            "SIA_DEVICE": "cpu", "SIA_BATCH_PLAN": "/p", "SIA_PROFILE_STEPS": "3"})
        self.assertEqual((c.rank, c.local_rank, c.world_size, c.local_world_size),
                         (2, 0, 4, 2))
        self.assertEqual((c.batch_size, c.local_bsz, c.micro_steps), (256, 32, 2))
        self.assertEqual((c.job, c.round, c.gpu_type, c.batch_plan),
                         ("j1", 7, "t4", "/p"))
        self.assertEqual((c.init_batch_size, c.report_interval, c.profile_steps),
                         (64.0, 0.5, 3))
        self.assertEqual(c.warnings, [])

    def test_local_batch_derived_from_the_batch(self):
        c = read_contract({"WORLD_SIZE": "2", "MASTER_PORT": "1",
                           "SIA_BATCH_SIZE": "96", "SIA_ACCUM_STEPS": "2"})
        self.assertEqual(c.local_bsz, 16)
        self.assertIn("not a multiple of WORLD_SIZE * (SIA_ACCUM_STEPS + 1) = 6",
                      self.error({"WORLD_SIZE": "2", "MASTER_PORT": "1",
                                  "SIA_BATCH_SIZE": "100", "SIA_ACCUM_STEPS": "2"}))

    def test_inconsistent_batch_is_a_warning_and_the_product_wins(self):
        c = read_contract({"SIA_BATCH_SIZE": "100", "SIA_LOCAL_BSZ": "32"})
        self.assertEqual(c.batch_size, 32)
        self.assertIn("training with 32", c.warnings[0])

    def test_the_batch_is_one_value(self):
        c = read_contract({"WORLD_SIZE": "2", "MASTER_PORT": "1",
                           "SIA_LOCAL_BSZ": "16", "SIA_ACCUM_STEPS": "2"})
        self.assertEqual(c.batch, BatchSetting(96, 16, 2))
        self.assertEqual(c.batch.mismatch(c.world_size), "")

    def test_an_overflowing_batch_is_refused_not_wrapped(self):
        self.assertIn("SIA_LOCAL_BSZ: local_bsz 1073741824 x 2 replicas x (accum_steps "
                      "1048576 + 1) is not from 0 to 1099511627776",
                      self.error({"WORLD_SIZE": "2", "MASTER_PORT": "1",
                                  "SIA_LOCAL_BSZ": str(1 << 30),
                                  "SIA_ACCUM_STEPS": str(1 << 20)}))

    def test_errors_name_the_variable(self):
        self.assertEqual(self.error({"SIA_LOCAL_BSZ": "x"}),
                         'SIA_LOCAL_BSZ: expected a positive integer, got "x"')
        self.assertEqual(self.error({"RANK": "2", "WORLD_SIZE": "2",
                                     "MASTER_PORT": "1"}),
                         'RANK: expected an integer in [0, WORLD_SIZE), got "2"')
        self.assertIn("MASTER_PORT: missing", self.error({"WORLD_SIZE": "2"}))
        self.assertIn("SIA_RESTORE=1 needs SIA_CKPT_DIR",
                      self.error({"SIA_RESTORE": "1"}))
        self.assertIn("SIA_DEVICE", self.error({"SIA_DEVICE": "gpu"}))
        self.assertIn("SIA_REPORT_INTERVAL", self.error({"SIA_REPORT_INTERVAL": "0"}))
        self.assertIn("SIA_RENDEZVOUS_TIMEOUT",
                      self.error({"SIA_RENDEZVOUS_TIMEOUT": "nan"}))
        self.assertIn("SIA_ACCUM_STEPS", self.error({"SIA_ACCUM_STEPS": "-1"}))

    def test_stop_fraction_is_a_number_from_0_to_1(self):
        self.assertEqual(read_contract({}).stop_fraction, 0.0)
        for value in ("0", "0.25", "1"):
            self.assertEqual(read_contract({"SIA_STOP_FRACTION": value}).stop_fraction,
                             float(value))
        for value in ("-0.1", "1.5", "nan", "inf", "half"):
            self.assertEqual(self.error({"SIA_STOP_FRACTION": value}),
                             f'SIA_STOP_FRACTION: expected a number from 0 to 1, '
                             f'got "{value}"')


if __name__ == "__main__":
    unittest.main()
