"""Batch plans: the in-place batch changes sia-run writes to SIA_BATCH_PLAN.

When only the batch of a running job changes, sia-run atomically rewrites the
file as one JSON object::

    {"type": "batch_plan", "job": "j1", "round": 7, "plan": 2,
     "batch_size": 96, "local_bsz": 16, "accum_steps": 2}

Promise: :meth:`BatchPlanReader.poll` is cheap when nothing changed (one
``os.stat``); it returns a plan only once, only for this job's round, only when
its number exceeds the last applied one and only when its numbers keep the batch
identity ``batch_size = local_bsz x world_size x (accum_steps + 1)``.  A missing
or unparsable file is no plan; a plan that breaks the identity is ignored with
one warning (through ``warn``).  Not thread-safe: one poller (rank 0).
"""

import dataclasses
import json
import os

from sia.batch_setting import BatchSetting


@dataclasses.dataclass(frozen=True)
class BatchPlan:
    plan: int
    batch: BatchSetting  # holds the identity for this job's world size

    # The setting's numbers, as sia.torch reads them.
    batch_size = property(lambda self: self.batch.batch_size)
    local_bsz = property(lambda self: self.batch.local_bsz)
    accum_steps = property(lambda self: self.batch.accum_steps)


class BatchPlanReader:
    """Polls ``path`` for plans of ``job``'s generation ``round``."""

    def __init__(self, path, round, world_size, applied=0, warn=None):
        self.path = path
        self.round = round
        self.world_size = world_size
        self.applied = applied
        self._warn = warn or (lambda message: None)
        self._seen = None  # (inode, size, mtime_ns) of the last file read
        self._warned = set()

    def poll(self):
        """The next plan to apply, or None."""
        if not self.path:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key == self._seen:
            return None
        self._seen = key
        try:
            with open(self.path, "rb") as f:
                doc = json.loads(f.read(65536))
        except (OSError, ValueError):
            return None
        return self._accept(doc)

    def _accept(self, doc):
        if not isinstance(doc, dict) or doc.get("type") != "batch_plan":
            return None
        plan = doc.get("plan")
        if doc.get("round") != self.round or isinstance(plan, bool) \
                or not isinstance(plan, int) or plan < 1:
            return None
        try:
            batch = BatchSetting.from_wire(doc)
        except ValueError:
            return None
        if plan <= self.applied:
            return None
        why = batch.mismatch(self.world_size)
        if why:
            if plan not in self._warned:
                self._warned.add(plan)
                self._warn(f"{self.path}: ignoring batch plan {plan}: {why}")
            return None
        return BatchPlan(plan, batch)
