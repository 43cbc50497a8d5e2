"""Joining the job's other ranks: the device, the signal handlers and the
process group.

Promises:
  * :func:`choose_device`: SIA_DEVICE cpu, cuda or auto (cuda when a device is
    usable and CUDA_VISIBLE_DEVICES is not empty); device LOCAL_RANK of the
    visible ones, or the one visible; no usable device for cuda is status 69.
  * :func:`handle_signals`: SIGTERM and SIGINT either exit 75 at once (before
    and during the rendezvous: nothing is computed, the last checkpoint
    stands) or call ``on_stop`` (after it).
  * :func:`join`: gloo on the CPU, NCCL on a GPU, over a TCP store at
    MASTER_ADDR:MASTER_PORT whose keys are those of this job and round only;
    rank 0 retries a port still in use (the previous round's store) until the
    deadline.
    Every wait is short and in Python, so that a signal's handler runs within a
    fraction of a second (PyTorch's own waits for the store hold the GIL).  A
    rendezvous that does not complete within SIA_RENDEZVOUS_TIMEOUT, or fails,
    is status 69.  The process group is destroyed at exit, before the
    interpreter is torn down (gloo's threads may otherwise still hold tensors,
    and the process aborts).
  * :data:`tails`: the Python callbacks of collectives' futures
    (``Future.then``) that a communication thread still holds.  torch drops
    such a callback on that thread after it ran, taking the GIL; once the
    interpreter is being torn down, taking it ends the thread inside a
    destructor and the process aborts ("terminate called without an active
    exception"), a done job's rank 0 then exiting -6.  Each callback carries a
    token (``tails.token()``, e.g. as an attribute of the function); the exit
    handler waits (at most 10 s) until every token was dropped.
Call them from the main thread.
"""

import atexit
import datetime
import os
import signal
import socket
import sys
import threading
import time

import torch
import torch.distributed as dist

from sia.status import PREEMPTED, UNAVAILABLE, SiaError
from sia.torch.diagnostics import first_line


def choose_device(c):
    if c.device == "cpu":
        return torch.device("cpu")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    usable = visible != "" and torch.cuda.is_available()
    if c.device == "auto" and not usable:
        return torch.device("cpu")
    if not usable:
        raise SiaError(UNAVAILABLE, "SIA_DEVICE=cuda but no CUDA device is usable")
    count = torch.cuda.device_count()
    index = 0 if count == 1 else c.local_rank
    if index >= count:
        raise SiaError(UNAVAILABLE, f"LOCAL_RANK {c.local_rank} but only {count} "
                       "CUDA device(s) are visible")
    return torch.device("cuda", index)


def handle_signals(prog, rank, on_stop=None):
    def exit_now(signum, frame):
        sys.stderr.write(f"{prog}: rank {rank}: signal {signum} during the "
                         "rendezvous: exiting (the last checkpoint stands)\n")
        os._exit(PREEMPTED)

    def stop(signum, frame):
        on_stop()

    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, exit_now if on_stop is None else stop)


def join(c, device):
    backend = "nccl" if device.type == "cuda" else "gloo"
    deadline = time.monotonic() + c.rendezvous_timeout
    try:
        store = dist.HashStore() if c.world_size == 1 else _join_store(c, deadline)
        dist.init_process_group(backend, store=store, rank=c.rank,
                                world_size=c.world_size,
                                timeout=datetime.timedelta(seconds=c.peer_timeout))
        atexit.register(_destroy)
    except RuntimeError as e:
        raise SiaError(UNAVAILABLE, f"rank {c.rank}: the rendezvous at "
                       f"{c.master_addr}:{c.master_port} failed: "
                       f"{first_line(e)}") from None


class _Tails:
    def __init__(self):
        self._changed = threading.Condition()
        self._held = 0

    def token(self):
        with self._changed:
            self._held += 1
        return _Token(self)

    def _dropped(self):
        with self._changed:
            self._held -= 1
            self._changed.notify_all()

    def wait(self, seconds):
        with self._changed:
            return self._changed.wait_for(lambda: self._held == 0, seconds)


class _Token:
    __slots__ = ("_tails",)

    def __init__(self, owner):
        self._tails = owner

    def __del__(self):
        self._tails._dropped()


tails = _Tails()


def _destroy():
    tails.wait(10.0)
    if dist.is_initialized():
        dist.destroy_process_group()


def _join_store(c, deadline):
    def late(arrived=None):
        return SiaError(UNAVAILABLE, f"rank {c.rank}: the rendezvous at "
                        f"{c.master_addr}:{c.master_port} did not complete within "
                        f"{c.rendezvous_timeout:g} s (SIA_RENDEZVOUS_TIMEOUT)"
                        + ("" if arrived is None else
                           f": {arrived} of {c.world_size} rank(s) arrived"))
    root = c.rank == 0
    if not root:  # wait for rank 0's store here, not in TCPStore's connect loop
        while True:
            try:
                socket.create_connection((c.master_addr, c.master_port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise late() from None
                time.sleep(0.1)
    while True:
        try:
            store = dist.TCPStore(c.master_addr, c.master_port, c.world_size, root,
                                  datetime.timedelta(seconds=c.rendezvous_timeout),
                                  wait_for_workers=False)
            break
        except RuntimeError as e:
            # The port may still be held by the previous round's store: retry, as the
            # reference worker does, until the rendezvous deadline.
            if not root or "in use" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    # Ranks of another job or round never share keys with ours.
    store = dist.PrefixStore(f"sia/{c.job}/{c.round}", store)
    # Each rank counts itself in, then polls the count, so that a signal is handled
    # between polls. An add is answered at once: no request to the store ever times out
    # here. One that does (a wait with a short timeout) leaves its late answer on the
    # socket in torch 1.13, read as the answer to the next request (an add then returned
    # 256 for 1), and leaves the short timeout on the socket too; init_process_group's
    # barrier then failed ("Socket Timeout") on a loaded machine.
    store.add("arrived", 1)
    while True:
        arrived = store.add("arrived", 0)
        if arrived >= c.world_size:
            return store
        if time.monotonic() > deadline:
            raise late(arrived)
        time.sleep(0.05)
