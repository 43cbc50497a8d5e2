"""Where rank 0's reports go: a JSON Lines file, or a ZeroMQ PUSH endpoint.

Promise: :meth:`ReportSink.send` writes one complete line per report with one
``write`` on a file opened with O_APPEND (so concurrent appenders never interleave
within a line), and never writes NaN, an infinity or null: such fields are left
out, as the contract requires.  An endpoint (tcp://, ipc://) needs pyzmq; without
it, or when the file cannot be opened, the constructor raises
:class:`~sia.status.SiaError` (78 / 73).  Not thread-safe: one sender.
"""

import json
import math
import os

from sia.status import CANT_CREATE, CONFIG, IO_ERROR, SiaError


def clean(report):
    """The report without fields that have no value (None, NaN, infinite)."""
    out = {}
    for key, value in report.items():
        if value is None:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        out[key] = value
    return out


def encode(report):
    """One JSON line (compact, key order kept) for ``report``."""
    return json.dumps(clean(report), separators=(",", ":"),
                      allow_nan=False) + "\n"


class ReportSink:
    """Reports to ``target``: a file path, a ZeroMQ endpoint, or "" (nowhere)."""

    def __init__(self, target):
        self.target = target
        self._fd = None
        self._socket = None
        if not target:
            return
        if target.startswith(("tcp://", "ipc://")):
            try:
                import zmq
            except ImportError:
                raise SiaError(CONFIG, f"SIA_REPORT: {target} is a ZeroMQ endpoint "
                               "and pyzmq is not installed (pip install pyzmq, "
                               "or give a file)") from None
            self._socket = zmq.Context.instance().socket(zmq.PUSH)
            self._socket.setsockopt(zmq.LINGER, 2000)
            self._socket.connect(target)
            return
        try:
            self._fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                               | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise SiaError(CANT_CREATE,
                           f"SIA_REPORT: cannot open {target}: {e.strerror}") from None

    def send(self, report):
        line = encode(report)
        if self._socket is not None:
            self._socket.send_string(line.rstrip("\n"))
        elif self._fd is not None:
            data = line.encode()
            try:
                if os.write(self._fd, data) != len(data):
                    raise OSError(0, "short write")
            except OSError as e:
                raise SiaError(IO_ERROR,
                               f"SIA_REPORT: cannot write {self.target}: {e.strerror}"
                               ) from None

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
