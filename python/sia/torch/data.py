"""The elastic data loader: batches whose position survives restarts.

:class:`ElasticDataLoader` takes any map-style dataset and the script's batch
size (B0, the batch the learning rate was tuned for), and yields this rank's
micro-batches of the batch the scheduler gives the job -- SIA_LOCAL_BSZ
samples, SIA_ACCUM_STEPS + 1 of them per optimizer step -- laid out as
:mod:`sia.positions` describes.

Promises:
  * within an epoch, across any sequence of restarts with other world sizes,
    local batches and micro-steps, and of in-place batch plans, every sample
    is taken exactly once (``drop_last=True``: except the last partial batch);
  * the order is one permutation per epoch, drawn from ``seed`` and the epoch
    (``shuffle=False``: the dataset's order);
  * a rank with no samples in the last micro-steps of an epoch gets empty
    batches (every tensor sliced to length 0), so that it still takes part in
    the step; its gradient and loss weigh nothing;
  * the loader stops at the step limit given to
    :func:`~sia.torch.epochs.remaining_epochs_until`;
  * asking it for the next batch is a step boundary
    (:meth:`~sia.torch.runtime.Session.boundary`: a stop, a rung, a periodic
    checkpoint happen there, after the script's code for the last step),
    except after an epoch's last step: that boundary is the epoch loop's,
    after the script's end-of-epoch code;
  * an epoch is never empty: a position at the end of the epoch (a restore
    on an epoch boundary, with any batch) starts the next one.
Samplers are refused: the loader chooses the samples.  Other DataLoader
arguments (num_workers, collate_fn, pin_memory, ...) pass through.  One
training loader per job; iterate it from the training thread.
"""

import collections

import torch
from torch.utils.data import DataLoader

from sia.positions import layout_step
from sia.torch import runtime


def _empty_like(batch):
    """``batch`` with every tensor cut to length 0 (other leaves kept)."""
    if isinstance(batch, torch.Tensor):
        return batch[:0]
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(_empty_like(b) for b in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_empty_like(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _empty_like(v) for k, v in batch.items()}
    return batch


class _Slices:
    """The batch sampler: index lists of the steps from the session's current
    position and configuration; it notes each slice's layout for the loader."""

    def __init__(self, order, session, epoch_len, drop_last, pending):
        self.order = order
        self.session = session
        self.epoch_len = epoch_len
        self.drop_last = drop_last
        self.pending = pending

    def __iter__(self):
        s = self.session
        position, rank = s.position, s.rank
        while True:
            layout = layout_step(position, self.epoch_len, s.local_bsz, s.world,
                                 s.micro, self.drop_last)
            if layout is None:
                return
            for a in range(layout.micro):
                start, count = layout.slot(a, rank)
                self.pending.append((layout, a, count))
                # An empty slice still loads one sample, cut away afterwards.
                first = min(start, self.epoch_len - 1)
                yield self.order[start:start + count] if count else [self.order[first]]
            position += layout.take


class ElasticDataLoader:
    """This rank's micro-batches of ``dataset``; ``batch_size`` is the script's
    batch B0.  Iterating it goes through the rest of the current epoch."""

    def __init__(self, dataset, batch_size, shuffle=True, drop_last=False, seed=0,
                 **kwargs):
        for name in ("sampler", "batch_sampler"):
            if kwargs.get(name) is not None:
                raise ValueError(f"ElasticDataLoader: no {name}: the loader chooses "
                                 "the samples itself, so that its position "
                                 "survives restarts")
            kwargs.pop(name, None)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("ElasticDataLoader: batch_size must be a positive integer")
        s = runtime.session()
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.kwargs = kwargs
        self._session = s
        if s.seed is None:
            s.seed = seed
        s.set_default_batch(batch_size)
        s.epoch_len, s.drop_last = len(dataset), drop_last
        s.settle_epoch()
        self._order_epoch, self._order = None, None

    def _epoch_order(self, epoch):
        if self._order_epoch != epoch:
            n = len(self.dataset)
            if self.shuffle:
                g = torch.Generator()
                g.manual_seed((self._session.seed * 1_000_003 + epoch) % (1 << 63))
                self._order = torch.randperm(n, generator=g).tolist()
            else:
                self._order = list(range(n))
            self._order_epoch = epoch
        return self._order

    def __iter__(self):
        s = self._session
        epoch, n = s.epoch, len(self.dataset)
        while not s.steps_done():
            if s.epoch_over():
                s.epoch, s.position = epoch + 1, 0
                return
            s.boundary()  # a restart at its rung takes no step
            pending = collections.deque()
            slices = _Slices(self._epoch_order(epoch), s, n, self.drop_last, pending)
            version = s.config_version
            for batch in DataLoader(self.dataset, batch_sampler=slices, **self.kwargs):
                layout, a, count = pending.popleft()
                s.begin_micro(layout, a, count)
                yield batch if count else _empty_like(batch)
                if s.layout is None:  # the step ended (the script's code after it too)
                    if s.config_version != version or s.steps_done():
                        break  # a new batch plan (or the end): lay out afresh
                    if not s.epoch_over():  # else the epoch loop's boundary
                        s.boundary()

    def __len__(self):
        """Micro-batches of a whole epoch at the current configuration."""
        s = self._session
        n, position, total = len(self.dataset), 0, 0
        while True:
            layout = layout_step(position, n, s.local_bsz, s.world, s.micro,
                                 self.drop_last)
            if layout is None:
                return total
            total += layout.micro
            position += layout.take
