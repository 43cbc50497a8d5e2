"""What sia.torch writes to stderr: its log lines and the one error line that
ends a process.

Promises: :func:`log` writes one line, "sia.torch: [rank R: ]MESSAGE", and
flushes; :func:`die` writes "sia.torch: error: MESSAGE" and ends the process at
once with ``status`` (nothing else is printed, no exit handler runs).
Depends on nothing else of sia.torch, so every module may use it.
Thread-safe as far as a line written at once is.
"""

import os
import sys

PROG = "sia.torch"


def log(message, rank=None):
    prefix = f"{PROG}: " if rank is None else f"{PROG}: rank {rank}: "
    sys.stderr.write(prefix + message + "\n")
    sys.stderr.flush()


def first_line(error):
    """The first line of an exception's message (torch's run on)."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def die(status, message):
    """Ends the process: one error line, the contract's status, nothing else."""
    sys.stdout.flush()
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.stderr.flush()
    os._exit(status)
