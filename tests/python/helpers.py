"""Shared by the tests: the interpreter with torch, processes, reports, records."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON = os.environ.get("SIA_PYTHON") or "/usr/bin/python3"
SCENARIO = os.path.join(HERE, "scenario.py")
EXAMPLES = os.path.join(REPO, "examples", "pytorch")

if os.path.join(REPO, "python") not in sys.path:
    sys.path.insert(0, os.path.join(REPO, "python"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(**extra):
    """The environment of a job process: no contract variables but ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("SIA_") or k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                                  "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                                                  "MASTER_PORT"))}
    env.update(PYTHONPATH=os.path.join(REPO, "python"), OMP_NUM_THREADS="1",
               CUDA_VISIBLE_DEVICES="", SIA_RENDEZVOUS_TIMEOUT="60",
               SIA_PEER_TIMEOUT="60")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args, timeout=120, **env):
    """Runs ``PYTHON args`` to its end: (status, stdout, stderr)."""
    p = subprocess.run([PYTHON] + args, env=base_env(**env), capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class Job:
    """``world`` ranks of ``PYTHON args`` on 127.0.0.1, logs in ``directory``."""

    def __init__(self, directory, args, world, port=None, **env):
        self.directory = directory
        self.port = port or free_port()
        self.log_paths = [os.path.join(directory, f"rank-{r}.log")
                          for r in range(world)]
        self.procs = []
        for r in range(world):
            e = base_env(RANK=r, LOCAL_RANK=r, WORLD_SIZE=world, LOCAL_WORLD_SIZE=world,
                         MASTER_ADDR="127.0.0.1", MASTER_PORT=self.port, **env)
            with open(self.log_paths[r], "a") as log:
                self.procs.append(subprocess.Popen([PYTHON] + args, env=e, stdout=log,
                                                   stderr=subprocess.STDOUT))

    def signal(self, ranks=None, sig=signal.SIGTERM):
        for r in ranks if ranks is not None else range(len(self.procs)):
            self.procs[r].send_signal(sig)

    def wait(self, timeout=120):
        try:
            return [p.wait(timeout) for p in self.procs]
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the job did not end in {timeout} s:\n"
                                 + self.logs()) from None
        finally:
            self.kill()

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    def log(self, rank=0):
        with open(self.log_paths[rank]) as f:
            return f.read()

    def logs(self):
        """Every rank's log, for failure messages."""
        return "".join(f"--- rank {r}\n{self.log(r)}" for r in range(len(self.procs)))


def reports(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def wait_for(predicate, timeout=60, what="a condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def recorded_ids(paths):
    ids = []
    for path in paths:
        if os.path.exists(path):
            with open(path) as f:
                ids += [int(line) for line in f if line.strip()]
    return ids
