"""sia.batch_setting: the batch as one value, the mirror of sia::BatchSetting."""

import unittest

import helpers  # noqa: F401
from sia.batch_setting import MAX_GLOBAL_BATCH, BatchSetting


class Settings(unittest.TestCase):
    def test_of_keeps_the_invariant(self):
        b = BatchSetting.of(16, 3, 1)
        self.assertEqual((b.batch_size, b.local_bsz, b.accum_steps, b.micro_steps),
                         (96, 16, 1, 2))
        self.assertEqual(b.mismatch(3), "")
        self.assertIn("batch_size 96 is not local_bsz 16 x 2 replicas x (accum_steps 1 + 1)"
                      " = 64", b.mismatch(2))

    def test_an_overflowing_product_is_refused(self):
        with self.assertRaisesRegex(ValueError, "is not from 0 to"):
            BatchSetting.of(1 << 30, 1 << 16, 1 << 20)
        self.assertNotEqual(BatchSetting(MAX_GLOBAL_BATCH * 2, MAX_GLOBAL_BATCH, 1)
                            .mismatch(1), "")

    def test_wire_round_trip(self):
        b = BatchSetting(96, 16, 2)
        self.assertEqual(BatchSetting.from_wire(b.to_wire()), b)
        self.assertEqual(BatchSetting.from_wire({"batch_size": 96.0, "local_bsz": 16,
                                                 "accum_steps": 2}), b)
        self.assertEqual(BatchSetting.from_wire({"batch_size": 32, "local_bsz": 32}),
                         BatchSetting(32, 32, 0))  # accum_steps absent: none

    def test_bad_wire_values_name_the_field(self):
        for doc, field in (({"batch_size": 96.5, "local_bsz": 16}, "batch_size"),
                           ({"local_bsz": 16}, "batch_size"),
                           ({"batch_size": 96, "local_bsz": "16"}, "local_bsz"),
                           ({"batch_size": 96, "local_bsz": True}, "local_bsz"),
                           ({"batch_size": 96, "local_bsz": 16, "accum_steps": -1},
                            "accum_steps")):
            with self.assertRaisesRegex(ValueError, "^" + field + ": expected"):
                BatchSetting.from_wire(doc)


if __name__ == "__main__":
    unittest.main()
