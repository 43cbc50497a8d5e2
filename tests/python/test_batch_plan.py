"""sia.batch_plan: reading SIA_BATCH_PLAN."""

import json
import os
import tempfile
import unittest

import helpers  # noqa: F401
from sia.batch_plan import BatchPlan, BatchPlanReader
from sia.batch_setting import BatchSetting


class Plans(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "batch-plan.json")
        self.warnings = []
        self.reader = BatchPlanReader(self.path, 7, 2, warn=self.warnings.append)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        with open(self.path + ".tmp", "w") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        os.replace(self.path + ".tmp", self.path)

    def plan(self, **fields):
        doc = {"type": "batch_plan", "job": "j1", "round": 7, "plan": 1,
               "batch_size": 96, "local_bsz": 16, "accum_steps": 2}
        doc.update(fields)
        return doc

    def test_missing_and_garbage_are_no_plan(self):
        self.assertIsNone(self.reader.poll())
        self.write("{not json")
        self.assertIsNone(self.reader.poll())

    def test_a_plan_once(self):
        self.write(self.plan())
        self.assertEqual(self.reader.poll(), BatchPlan(1, BatchSetting(96, 16, 2)))
        self.reader.applied = 1
        self.assertIsNone(self.reader.poll())  # unchanged file: not even read
        self.write(self.plan(plan=1, batch_size=32, local_bsz=16, accum_steps=0))
        self.assertIsNone(self.reader.poll())  # not newer than the applied one
        self.write(self.plan(plan=2, batch_size=32, local_bsz=16, accum_steps=0))
        self.assertEqual(self.reader.poll(), BatchPlan(2, BatchSetting(32, 16, 0)))

    def test_other_round_and_bad_fields_are_ignored(self):
        for doc in (self.plan(round=6), self.plan(type="x"), self.plan(local_bsz=0),
                    self.plan(plan="2"), self.plan(accum_steps=-1), [1],
                    self.plan(batch_size=96.5), self.plan(local_bsz=True)):
            self.write(doc)
            self.assertIsNone(self.reader.poll(), doc)
        self.assertEqual(self.warnings, [])

    def test_an_integral_float_batch_is_a_batch(self):
        self.write(self.plan(batch_size=96.0))  # as C++ reads it
        plan = self.reader.poll()
        self.assertEqual(plan, BatchPlan(1, BatchSetting(96, 16, 2)))
        self.assertEqual((plan.batch_size, plan.local_bsz, plan.accum_steps), (96, 16, 2))

    def test_broken_identity_warns_once(self):
        self.write(self.plan(batch_size=100))
        self.assertIsNone(self.reader.poll())
        self.write(self.plan(batch_size=100, job="again"))
        self.assertIsNone(self.reader.poll())
        self.assertEqual(len(self.warnings), 1)
        self.assertIn("ignoring batch plan 1", self.warnings[0])


if __name__ == "__main__":
    unittest.main()
