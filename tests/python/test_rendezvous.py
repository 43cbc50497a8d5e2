"""The rendezvous (sia.torch.process_group): however long it polls for a late rank, the
store afterwards answers each request with its own answer, within the store's own
timeout."""

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

# Rank 0's store in a process of its own, which counts itself in 0.8 s late: rank 1 polls
# for it many times before the rendezvous completes.
ROOT = """
import datetime, sys, time
import torch.distributed as dist
port = int(sys.argv[1])
store = dist.TCPStore("127.0.0.1", port, 2, True, datetime.timedelta(seconds=60),
                      wait_for_workers=False)
time.sleep(0.8)
dist.PrefixStore("sia/t/1", store).add("arrived", 1)
print("arrived", flush=True)
time.sleep(60)
"""


def wait_stopped(pid):
    """Until every thread of process ``pid`` has stopped: SIGSTOP takes effect when each
    thread next runs, which on a loaded machine can be after the next request."""
    deadline = time.monotonic() + 30
    while True:
        states = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        if all(s in "Tt" for s in states):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} did not stop: thread states {states}")
        time.sleep(0.01)


class Rendezvous(unittest.TestCase):
    def test_store_answers_in_step_after_polling_for_a_late_rank(self):
        port = free_port()
        root = subprocess.Popen([PYTHON, "-c", ROOT, str(port)], env=base_env(),
                                stdout=subprocess.PIPE, text=True)
        self.addCleanup(root.stdout.close)
        self.addCleanup(root.wait)
        self.addCleanup(root.kill)
        c = types.SimpleNamespace(rank=1, world_size=2, master_addr="127.0.0.1",
                                  master_port=port, rendezvous_timeout=30.0, job="t",
                                  round=1)
        t0 = time.monotonic()
        store = process_group._join_store(c, time.monotonic() + c.rendezvous_timeout)
        self.assertEqual(root.stdout.readline().strip(), "arrived")
        self.assertGreater(time.monotonic() - t0, 0.5)  # so it polled for rank 0
        # Rank 0's store stops answering for 1 s (a loaded machine); an add, as
        # init_process_group's barrier makes, waits for it and gets its own answer.
        os.kill(root.pid, signal.SIGSTOP)
        wait_stopped(root.pid)
        t1 = time.monotonic()  # before the timer, so the add waits 1 s after it at least
        resume = threading.Timer(1.0, os.kill, (root.pid, signal.SIGCONT))
        resume.start()
        self.addCleanup(resume.cancel)
        self.assertEqual(store.add("barrier", 1), 1)
        self.assertGreaterEqual(time.monotonic() - t1, 0.9)
        store.set("key", "value")
        self.assertEqual(store.get("key"), b"value")


class Tails(unittest.TestCase):
    """The exit handler's wait for the callbacks a communication thread holds."""

    def test_a_held_token_is_waited_for_and_a_dropped_one_is_not(self):
        token = process_group.tails.token()
        self.assertFalse(process_group.tails.wait(0.1))
        del token
        self.assertTrue(process_group.tails.wait(0.1))

    def test_a_futures_callback_drops_its_token_on_gloos_thread(self):
        import torch.distributed as dist
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            seen = []

            def reduced(fut):
                seen.append(threading.current_thread() is not threading.main_thread())
                return fut.value()[0]

            reduced.tail = process_group.tails.token()
            work = dist.all_reduce(torch.ones(4), async_op=True)
            out = work.get_future().then(reduced)
            del reduced
            self.assertEqual(out.wait().tolist(), [1.0] * 4)
            self.assertTrue(process_group.tails.wait(10.0))
            self.assertEqual(len(seen), 1)
        finally:
            dist.destroy_process_group()


if __name__ == "__main__":
    unittest.main()
