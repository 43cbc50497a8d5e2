"""sia.checkpoint: atomic, checksummed files and latest."""

import os
import tempfile
import unittest

import helpers  # noqa: F401
from sia import checkpoint
from sia.status import DATA, NO_INPUT, SiaError


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
        self.assertEqual(sorted(os.listdir(self.dir)),
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
        self.assertEqual(self.status()[0], NO_INPUT)


if __name__ == "__main__":
    unittest.main()
