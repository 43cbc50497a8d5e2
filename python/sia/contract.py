"""The worker contract's environment (sia-worker(7)), parsed and checked.

Promise: :func:`read_contract` either returns a complete :class:`Contract` or
raises :class:`~sia.status.SiaError` with status 78 and a one-line message naming
the variable, e.g. ``SIA_LOCAL_BSZ: expected a positive integer, got "x"``.  A
person running a script by hand may set none of the variables: one rank, no
reports, no checkpoints, the script's own batch size.  The batch identity
``SIA_BATCH_SIZE = SIA_LOCAL_BSZ x WORLD_SIZE x (SIA_ACCUM_STEPS + 1)`` holds for
the returned values; a disagreeing SIA_BATCH_SIZE becomes a warning.
Pure function of its input: thread-safe.
"""

import dataclasses
import math
import os

from sia.batch_setting import MAX_ACCUM_STEPS, BatchSetting
from sia.status import CONFIG, SiaError

_MAX_INT = 1 << 30


@dataclasses.dataclass
class Contract:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    local_world_size: int = 1
    master_addr: str = "127.0.0.1"
    master_port: int = 0
    job: str = ""
    round: int = 0
    gpu_type: str = ""
    # The scheduler's batch (it holds the identity for world_size); None when it gave
    # none (the script's default applies, split into accum_steps + 1 micro-steps).
    batch: BatchSetting = None
    accum_steps: int = 0
    ckpt_dir: str = ""
    restore: bool = False
    report: str = ""
    report_interval: float = 30.0
    profile_steps: int = 0
    init_batch_size: float = None
    device: str = "auto"
    rendezvous_timeout: float = 300.0
    peer_timeout: float = 600.0
    batch_plan: str = ""
    # A trial of an app stops at its rung: this fraction of its training (0: none).
    stop_fraction: float = 0.0
    warnings: list = dataclasses.field(default_factory=list)

    @property
    def micro_steps(self):
        return self.accum_steps + 1

    @property
    def batch_size(self):
        return self.batch.batch_size if self.batch else None

    @property
    def local_bsz(self):
        return self.batch.local_bsz if self.batch else None


def _bad(name, value, what):
    raise SiaError(CONFIG, f'{name}: expected {what}, got "{value}"')


class _Reader:
    def __init__(self, environ):
        self.environ = environ

    def text(self, name):
        value = self.environ.get(name, "")
        return value if value != "" else None

    def integer(self, name, default, lo, hi, what):
        value = self.text(name)
        if value is None:
            return default
        try:
            x = int(value.strip(), 10)
        except ValueError:
            _bad(name, value, what)
        if not lo <= x <= hi:
            _bad(name, value, what)
        return x

    def number(self, name, default, lo, what, strict=False, hi=math.inf):
        value = self.text(name)
        if value is None:
            return default
        try:
            x = float(value)
        except ValueError:
            _bad(name, value, what)
        if not math.isfinite(x) or x < lo or (strict and x == lo) or x > hi:
            _bad(name, value, what)
        return x


def read_contract(environ=None):
    """The contract read from ``environ`` (default ``os.environ``)."""
    r = _Reader(os.environ if environ is None else environ)
    c = Contract()
    c.world_size = r.integer("WORLD_SIZE", 1, 1, 65536, "a positive integer")
    c.rank = r.integer("RANK", 0, 0, c.world_size - 1,
                       "an integer in [0, WORLD_SIZE)")
    c.local_world_size = r.integer("LOCAL_WORLD_SIZE", c.world_size, 1,
                                   c.world_size,
                                   "an integer in [1, WORLD_SIZE]")
    c.local_rank = r.integer("LOCAL_RANK", c.rank % c.local_world_size, 0,
                             c.local_world_size - 1,
                             "an integer in [0, LOCAL_WORLD_SIZE)")
    c.master_addr = r.text("MASTER_ADDR") or c.master_addr
    c.master_port = r.integer("MASTER_PORT", 0, 1, 65535, "a TCP port")
    if c.world_size > 1 and c.master_port == 0:
        raise SiaError(CONFIG, "MASTER_PORT: missing (needed when WORLD_SIZE > 1)")
    c.job = r.text("SIA_JOB") or ""
    c.round = r.integer("SIA_ROUND", 0, 0, 1 << 62, "a non-negative integer")
    c.gpu_type = r.text("SIA_GPU_TYPE") or ""
    c.accum_steps = r.integer("SIA_ACCUM_STEPS", 0, 0, MAX_ACCUM_STEPS,
                              "a non-negative integer")
    batch = r.integer("SIA_BATCH_SIZE", None, 1, _MAX_INT, "a positive integer")
    local = r.integer("SIA_LOCAL_BSZ", None, 1, _MAX_INT, "a positive integer")
    per_local = c.world_size * c.micro_steps
    if local is None and batch is not None:
        if batch % per_local != 0:
            raise SiaError(CONFIG, f"SIA_BATCH_SIZE: {batch} is not a multiple of "
                           f"WORLD_SIZE * (SIA_ACCUM_STEPS + 1) = {per_local} "
                           "(set SIA_LOCAL_BSZ)")
        local = batch // per_local
    if local is not None:
        try:
            c.batch = BatchSetting.of(local, c.world_size, c.accum_steps)
        except ValueError as e:
            raise SiaError(CONFIG, f"SIA_LOCAL_BSZ: {e}") from None
        if batch is not None and batch != c.batch.batch_size:
            c.warnings.append(
                f"SIA_BATCH_SIZE {batch} differs from SIA_LOCAL_BSZ * WORLD_SIZE * "
                f"(SIA_ACCUM_STEPS + 1) = {c.batch.batch_size}; training with "
                f"{c.batch.batch_size}")
    c.ckpt_dir = r.text("SIA_CKPT_DIR") or ""
    c.restore = r.integer("SIA_RESTORE", 0, 0, 1, "0 or 1") == 1
    if c.restore and not c.ckpt_dir:
        raise SiaError(CONFIG, "SIA_RESTORE=1 needs SIA_CKPT_DIR")
    c.report = r.text("SIA_REPORT") or ""
    c.report_interval = r.number("SIA_REPORT_INTERVAL", 30.0, 0.0,
                                 "a positive number of seconds", strict=True)
    c.profile_steps = r.integer("SIA_PROFILE_STEPS", 0, 0, 1 << 20,
                                "a non-negative integer")
    c.init_batch_size = r.number("SIA_INIT_BATCH_SIZE", None, 0.0,
                                 "a positive number", strict=True)
    c.stop_fraction = r.number("SIA_STOP_FRACTION", 0.0, 0.0, "a number from 0 to 1",
                               hi=1.0)
    c.device = r.text("SIA_DEVICE") or "auto"
    if c.device not in ("auto", "cpu", "cuda"):
        _bad("SIA_DEVICE", c.device, "auto, cpu or cuda")
    c.rendezvous_timeout = r.number("SIA_RENDEZVOUS_TIMEOUT", 300.0, 0.0,
                                    "a positive number of seconds", strict=True)
    c.peer_timeout = r.number("SIA_PEER_TIMEOUT", 600.0, 0.0,
                              "a positive number of seconds", strict=True)
    c.batch_plan = r.text("SIA_BATCH_PLAN") or ""
    return c
