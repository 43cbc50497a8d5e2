"""Data positions that survive any change of world size and batch.

An epoch visits the samples in the order of one permutation (drawn from the seed
and the epoch).  The optimizer step starting at epoch position P with batch
B = local_bsz x world x micro takes the permuted samples [P, P + B); micro-step
a of rank r takes the slice at P + (a x world + r) x local_bsz, as the reference
worker does (sia-worker(7)).  The position is all a checkpoint needs, whatever
the world size or batch of the next start.

The last, partial batch of an epoch (R < B samples left) still takes every
remaining sample exactly once: it uses the fewest micro-steps m that keep each
slice within ``local_bsz`` (m = ceil(R / (world x local_bsz))), and splits R
over the world x m slices as evenly as possible, in the same slice order.  A
slice may then be empty (fewer samples than slices); its rank still takes part
in the step.

Pure functions: thread-safe.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class StepLayout:
    start: int  # the epoch position of the step's first sample
    take: int  # samples the step consumes
    world: int
    micro: int  # micro-steps of this step (fewer than planned in a partial one)
    local_bsz: int  # the planned local batch (slices are at most this)

    @property
    def full(self):
        return self.take == self.local_bsz * self.world * self.micro

    def slot(self, a, r):
        """(epoch position, count) of micro-step ``a`` on rank ``r``."""
        s = a * self.world + r
        base, extra = divmod(self.take, self.world * self.micro)
        return self.start + s * base + min(s, extra), base + (1 if s < extra else 0)


def layout_step(position, epoch_len, local_bsz, world, micro, drop_last=False):
    """The layout of the step starting at ``position``; None at the epoch's end."""
    remaining = epoch_len - position
    batch = local_bsz * world * micro
    if remaining <= 0 or (drop_last and remaining < batch):
        return None
    take = min(batch, remaining)
    used = min(micro, -(-take // (world * local_bsz)))
    return StepLayout(position, take, world, used, local_bsz)
