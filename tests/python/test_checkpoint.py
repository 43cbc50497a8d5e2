"""sia.checkpoint: atomic, checksummed files and latest."""

import os
import tempfile
import unittest

import helpers  # noqa: F401
from sia import checkpoint
from sia.status import DATA, NO_INPUT, PREEMPTED, SiaError


class Checkpoint(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "ck")

    def tearDown(self):
        self.tmp.cleanup()

    def status(self):
        with self.assertRaises(SiaError) as cm:
            checkpoint.load_latest(self.dir)
        return cm.exception.status, cm.exception.message

    def test_no_latest_is_none(self):
        self.assertIsNone(checkpoint.load_latest(self.dir))

    def test_round_trip_keeps_latest_and_previous(self):
        for step in (1, 2, 3):
            path = checkpoint.save(self.dir, step, b"payload %d" % step)
        self.assertEqual(checkpoint.load_latest(self.dir), (path, b"payload 3"))
        with open(os.path.join(self.dir, "latest")) as f:
            self.assertEqual(f.read(), "ckpt-000000000003.pt\n")
        self.assertEqual(sorted(e for e in os.listdir(self.dir) if e[0] != "."),
                         ["ckpt-000000000002.pt", "ckpt-000000000003.pt", "latest"])

    def test_stale_temporary_files_are_removed(self):
        os.makedirs(self.dir)
        stale = os.path.join(self.dir, ".ckpt-000000000009.pt.tmp.999999999")
        open(stale, "wb").close()
        checkpoint.save(self.dir, 1, b"x")
        self.assertFalse(os.path.exists(stale))

    def test_truncated_file_is_a_data_error(self):
        path = checkpoint.save(self.dir, 5, b"y" * 1000)
        with open(path, "r+b") as f:
            f.truncate(500)
        status, message = self.status()
        self.assertEqual(status, DATA)
        self.assertIn("truncated", message)

    def test_flipped_byte_is_a_data_error(self):
        path = checkpoint.save(self.dir, 5, b"y" * 1000)
        with open(path, "r+b") as f:
            f.seek(-10, os.SEEK_END)
            f.write(b"z")
        self.assertEqual(self.status(), (DATA, f"{path}: corrupt checkpoint: "
                                               "checksum mismatch"))

    def test_bad_latest(self):
        checkpoint.save(self.dir, 5, b"y")
        with open(os.path.join(self.dir, "latest"), "w") as f:
            f.write("../../etc/passwd\n")
        self.assertEqual(self.status()[0], DATA)
        with open(os.path.join(self.dir, "latest"), "w") as f:
            f.write("ckpt-000000000777.pt\n")
        self.assertEqual(checkpoint.load_latest(self.dir)[1], b"y")  # the intact one
        os.unlink(os.path.join(self.dir, "ckpt-000000000005.pt"))
        self.assertEqual(self.status()[0], NO_INPUT)

    def test_damaged_latest_falls_back_to_the_newest_intact_one(self):
        older = checkpoint.save(self.dir, 4, b"four")
        path = checkpoint.save(self.dir, 5, b"y" * 1000)
        with open(path, "r+b") as f:
            f.truncate(500)
        said = []
        self.assertEqual(checkpoint.load_latest(self.dir, warn=said.append),
                         (older, b"four"))
        self.assertEqual(len(said), 1)
        self.assertIn("truncated", said[0])
        self.assertIn("restoring the newest intact checkpoint, ckpt-000000000004.pt",
                      said[0])
        os.unlink(path)  # missing: the same
        self.assertEqual(checkpoint.load_latest(self.dir), (older, b"four"))
        os.unlink(older)  # none left: the error
        self.assertEqual(self.status()[0], NO_INPUT)

    def test_a_stale_generation_leaves_the_checkpoints_alone(self):
        checkpoint.save(self.dir, 10, b"ten", generation=4)
        with open(os.path.join(self.dir, "generation"), "w") as f:
            f.write("5\n")  # sia-run started generation 5
        with self.assertRaises(SiaError) as cm:
            checkpoint.save(self.dir, 12, b"twelve", generation=4)
        self.assertEqual(cm.exception.status, PREEMPTED)
        self.assertIn("generation 5 of this job has started", cm.exception.message)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "ckpt-000000000012.pt")))
        self.assertEqual(checkpoint.load_latest(self.dir)[1], b"ten")
        checkpoint.save(self.dir, 11, b"eleven", generation=5)
        checkpoint.save(self.dir, 13, b"thirteen")  # not started by sia-run: not fenced
        self.assertEqual(checkpoint.load_latest(self.dir)[1], b"thirteen")


if __name__ == "__main__":
    unittest.main()
