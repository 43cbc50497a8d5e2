"""The batch a data-parallel job trains with, as one value (the mirror of the C++
``sia::BatchSetting``, lib/core/batch_setting.hpp).

A :class:`BatchSetting` holds the global batch (``batch_size``: samples per
optimizer step), the local batch (``local_bsz``: samples per rank per
micro-step) and ``accum_steps``, the EXTRA micro-steps of a step: a step is
``accum_steps + 1`` micro-steps (:attr:`BatchSetting.micro_steps`), the one
definition sia.torch and the contract use.  The invariant
``batch_size = local_bsz x replicas x (accum_steps + 1)`` is checked by
:meth:`BatchSetting.mismatch`, once where a setting enters (the worker
environment, a batch plan); :meth:`BatchSetting.of` builds one that holds it.
Products above :data:`MAX_GLOBAL_BATCH` are refused, as in C++.  Immutable:
thread-safe.
"""

import dataclasses

MAX_GLOBAL_BATCH = 1 << 40  # samples in one step
MAX_ACCUM_STEPS = 1 << 20  # extra micro-steps


def _count(value):
    """An int, or a float with an integral value (JSON's 96.0); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


@dataclasses.dataclass(frozen=True)
class BatchSetting:
    batch_size: int
    local_bsz: int
    accum_steps: int = 0

    @property
    def micro_steps(self):
        return self.accum_steps + 1

    @classmethod
    def of(cls, local_bsz, replicas, accum_steps=0):
        """The setting that trains ``local_bsz`` on each of ``replicas`` ranks for
        ``accum_steps + 1`` micro-steps; ValueError when the product is out of range."""
        product = local_bsz * replicas * (accum_steps + 1)
        if min(local_bsz, replicas, accum_steps) < 0 or product > MAX_GLOBAL_BATCH:
            raise ValueError(f"local_bsz {local_bsz} x {replicas} replicas x (accum_steps "
                             f"{accum_steps} + 1) is not from 0 to {MAX_GLOBAL_BATCH}")
        return cls(product, local_bsz, accum_steps)

    def mismatch(self, replicas):
        """'' when the invariant holds on ``replicas`` ranks, else why not."""
        product = self.local_bsz * replicas * self.micro_steps
        if product == self.batch_size and product <= MAX_GLOBAL_BATCH:
            return ""
        return (f"batch_size {self.batch_size} is not local_bsz {self.local_bsz} x "
                f"{replicas} replicas x (accum_steps {self.accum_steps} + 1) = {product}")

    @classmethod
    def from_wire(cls, doc):
        """The three wire fields of the dict ``doc`` (batch_size may be written 96.0);
        ValueError naming the first bad field."""
        limits = (("batch_size", 1, MAX_GLOBAL_BATCH), ("local_bsz", 1, (1 << 31) - 1),
                  ("accum_steps", 0, MAX_ACCUM_STEPS))
        values = []
        for key, low, high in limits:
            raw = doc.get(key, 0 if key == "accum_steps" else None)
            value = _count(raw)
            if value is None or not low <= value <= high:
                raise ValueError(f"{key}: expected an integer from {low} to {high}, "
                                 f"got {raw!r}")
            values.append(value)
        return cls(*values)

    def to_wire(self):
        return {"batch_size": self.batch_size, "local_bsz": self.local_bsz,
                "accum_steps": self.accum_steps}
