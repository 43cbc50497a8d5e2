"""Exit statuses of the worker contract (sia-worker(7)) and the error that carries one.

Promise: every failure the library detects is a :class:`SiaError` whose message is
one line and whose status is one of the contract's; nothing else decides an exit
status.  Plain values: thread-safe.
"""

DONE = 0
DATA = 65  # a corrupt checkpoint, a diverged loss
NO_INPUT = 66  # the checkpoint ``latest`` names is missing or unreadable
UNAVAILABLE = 69  # a peer was lost, the rendezvous did not complete
SOFTWARE = 70  # misuse of the library, a bug
OUT_OF_MEMORY = 71  # the local batch does not fit the device
CANT_CREATE = 73  # cannot create a checkpoint or report file
IO_ERROR = 74  # cannot write a checkpoint
PREEMPTED = 75  # stopped by SIGTERM/SIGINT after a checkpoint: resume me
CONFIG = 78  # a contract variable is missing or malformed


class SiaError(Exception):
    """A failure with the exit status the contract gives it."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message
