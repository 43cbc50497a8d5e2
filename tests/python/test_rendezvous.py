"""The rendezvous (sia.torch.process_group): after its short polling waits, the store
answers within the store's own timeout, not the poll's."""

import datetime
import os
import signal
import subprocess
import threading
import time
import types
import unittest

import torch  # noqa: F401

from helpers import PYTHON, base_env, free_port  # before sia
from sia.torch import process_group

NEEDS_TORCH = True

# Rank 0's store in a process of its own, which arrives 0.8 s late: rank 1's waits of
# 0.25 s time out several times before the rendezvous completes.
ROOT = """
import datetime, sys, time
import torch.distributed as dist
port = int(sys.argv[1])
store = dist.TCPStore("127.0.0.1", port, 2, True, datetime.timedelta(seconds=60),
                      wait_for_workers=False)
time.sleep(0.8)
dist.PrefixStore("sia/t/1", store).set("arrived/0", "1")
print("arrived", flush=True)
time.sleep(60)
"""


class Rendezvous(unittest.TestCase):
    def test_store_timeout_is_its_own_after_polls_time_out(self):
        port = free_port()
        root = subprocess.Popen([PYTHON, "-c", ROOT, str(port)], env=base_env(),
                                stdout=subprocess.PIPE, text=True)
        self.addCleanup(root.wait)
        self.addCleanup(root.kill)
        c = types.SimpleNamespace(rank=1, world_size=2, master_addr="127.0.0.1",
                                  master_port=port, rendezvous_timeout=30.0, job="t",
                                  round=1)
        t0 = time.monotonic()
        store = process_group._join_store(c, time.monotonic() + c.rendezvous_timeout)
        self.assertEqual(root.stdout.readline().strip(), "arrived")
        self.assertGreater(time.monotonic() - t0, 0.5)  # so at least one poll timed out
        # Rank 0's store stops answering for 1 s (a loaded machine); an add, as
        # init_process_group's barrier makes, waits for it instead of failing at 0.25 s.
        os.kill(root.pid, signal.SIGSTOP)
        t1 = time.monotonic()  # before the timer, so the add waits 1 s after it at least
        resume = threading.Timer(1.0, os.kill, (root.pid, signal.SIGCONT))
        resume.start()
        self.addCleanup(resume.cancel)
        self.assertEqual(store.add("barrier", 1), 1)
        self.assertGreaterEqual(time.monotonic() - t1, 0.9)


if __name__ == "__main__":
    unittest.main()
