"""sia.reports: the report sink."""

import json
import os
import tempfile
import unittest

import helpers  # noqa: F401
from sia.reports import ReportSink, encode
from sia.status import CANT_CREATE, SiaError


class Reports(unittest.TestCase):
    def test_no_value_fields_are_left_out(self):
        line = encode({"type": "report", "step": 3, "loss": float("nan"),
                       "step_time": float("inf"), "grad_var": None, "x": 0.5})
        self.assertEqual(line, '{"type":"report","step":3,"x":0.5}\n')

    def test_appends_whole_lines(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.jsonl")
            with open(path, "w") as f:
                f.write('{"type":"other"}\n')
            sinks = [ReportSink(path), ReportSink(path)]
            for i in range(50):
                sinks[i % 2].send({"type": "report", "step": i, "pad": "x" * 1000})
            for s in sinks:
                s.close()
            with open(path) as f:
                lines = [json.loads(line) for line in f]
            self.assertEqual([r.get("step") for r in lines[1:]], list(range(50)))

    def test_unwritable_file_is_cant_create(self):
        with self.assertRaises(SiaError) as cm:
            ReportSink("/nonexistent-dir/r.jsonl")
        self.assertEqual(cm.exception.status, CANT_CREATE)

    def test_endpoint_needs_pyzmq(self):
        try:
            import zmq  # noqa: F401
        except ImportError:
            with self.assertRaises(SiaError) as cm:
                ReportSink("tcp://127.0.0.1:5555")
            self.assertEqual(cm.exception.status, 78)
            self.assertIn("pyzmq", cm.exception.message)
        else:
            self.skipTest("pyzmq is installed")

    def test_nowhere(self):
        ReportSink("").send({"type": "report"})


if __name__ == "__main__":
    unittest.main()
