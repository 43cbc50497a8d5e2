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


@dataclasses.dataclass(frozen=True)
class BatchPlan:
    plan: int
    batch_size: int
    local_bsz: int
    accum_steps: int


def _positive_int(value, minimum=1):
    return (isinstance(value, int) and not isinstance(value, bool)
            and value >= minimum)


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
        fields = [doc.get(k) for k in ("plan", "batch_size", "local_bsz")]
        accum = doc.get("accum_steps", 0)
        if doc.get("round") != self.round or not all(map(_positive_int, fields)) \
                or not _positive_int(accum, 0):
            return None
        plan = BatchPlan(fields[0], fields[1], fields[2], accum)
        if plan.plan <= self.applied:
            return None
        product = plan.local_bsz * self.world_size * (plan.accum_steps + 1)
        if product != plan.batch_size:
            if plan.plan not in self._warned:
                self._warned.add(plan.plan)
                self._warn(f"{self.path}: ignoring batch plan {plan.plan}: batch_size "
                           f"{plan.batch_size} != local_bsz {plan.local_bsz} x "
                           f"world size {self.world_size} x (accum_steps "
                           f"{plan.accum_steps} + 1) = {product}")
            return None
        return plan
