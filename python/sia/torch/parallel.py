"""Data-parallel training: gradient synchronisation, accumulation, gradient
statistics and learning-rate scaling around a model and its optimizer.

:class:`AdaptiveDataParallel` (made by :func:`sia.torch.wrap`) wraps the model
in torch's DistributedDataParallel (with more than one rank) and takes over
``optimizer.step()``: the script calls it once for every batch the
:class:`~sia.torch.data.ElasticDataLoader` yields, and

  * on a micro-step before the last of an optimizer step, the forward and
    backward passes run under DDP's ``no_sync()``; ``optimizer.step()`` adds
    the gradient, weighted by its number of samples, to a running sum on the
    device and returns (no collective, no host synchronisation);
  * on the last, DDP all-reduces the gradient in buckets while the backward
    pass goes on; its communication hook (:meth:`_reduce_bucket`) first folds
    each bucket into the step's weighted sum divided by the step's samples
    (and adds its squared norm to the gradient statistics' local sum), so the
    all-reduce is the exact mean gradient, also for an uneven last batch of an
    epoch and for ranks with no samples; the reduced bucket's squared norm
    joins |g|^2, the mean gradient's (as Pollux and AdaptDL gather both);
  * ``optimizer.step()`` then takes the step's vote (stop, out of memory,
    batch plan, the statistics' local sum and rank 0's |g|^2: the one read of
    the device per step), measures the gradient statistics as Pollux does
    (:mod:`sia.gradient_noise`), scales every parameter group's learning rate
    for the one update (AdaScale gain, sqrt(B / B0), B / B0 or 1) on top of
    whatever the scheduler set, restores it after, and makes the replicas'
    buffers (batch-norm statistics) rank 0's.

One rank runs the same arithmetic without DDP.  The loss must be a mean over
the micro-batch (PyTorch's default reduction), and every parameter the
optimizer holds gets a gradient in every step (as DDP requires).  A rank that
runs out of memory inside a micro-step takes part in the step's reduction with
zeros (:meth:`join_reduction`) before it votes.  A scheduler given to
:func:`sia.torch.wrap` is checkpointed and steps only after real updates.  Not
thread-safe: the training thread calls it (the hook runs in autograd's).
"""

import functools
import math
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from sia.status import OUT_OF_MEMORY, SiaError
from sia.torch import runtime, state
from sia.torch.process_group import tails
from sia.torch.diagnostics import die, first_line

RULES = ("adascale", "sqrt", "linear", "none")
_BUCKET_BYTES = 25 << 20


def default_rule(optimizer):
    """AdaScale for SGD, the square-root rule for Adam and AdamW, else none."""
    if isinstance(optimizer, torch.optim.SGD):
        return "adascale"
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        return "sqrt"
    return "none"


def lr_factor(rule, batch, init_batch, gain):
    """The learning rate's multiplier at ``batch`` for ``rule``."""
    k = batch / init_batch
    if rule == "adascale":
        return gain
    if rule == "sqrt":
        return math.sqrt(k)
    if rule == "linear":
        return k
    return 1.0


def _sqr(tensors):
    """sum |t|^2 over ``tensors``, as a float."""
    if not tensors:
        return 0.0
    return float(torch.stack([t.float().pow(2).sum() for t in tensors]).sum())


def _buckets(tensors):
    """Index lists of same-dtype tensors of at most _BUCKET_BYTES each."""
    out, current, size, dtype = [], [], 0, None
    for i, t in enumerate(tensors):
        nbytes = t.numel() * t.element_size()
        if current and (t.dtype != dtype or size + nbytes > _BUCKET_BYTES):
            out.append(current)
            current, size = [], 0
        current.append(i)
        size += nbytes
        dtype = t.dtype
    if current:
        out.append(current)
    return out


def _coalesced(tensors, buckets, op):
    """Applies ``op`` to each bucket flattened, and copies the results back."""
    for bucket in buckets:
        flat = torch.cat([tensors[i].reshape(-1) for i in bucket])
        op(flat)
        offset = 0
        for i in bucket:
            n = tensors[i].numel()
            tensors[i].copy_(flat[offset:offset + n].view_as(tensors[i]))
            offset += n




class AdaptiveDataParallel(torch.nn.Module):
    """The wrapped model: call it as the model; ``.module`` is the model."""

    def __init__(self, module, optimizer, scheduler=None, lr_scaling=None):
        super().__init__()
        s = runtime.session()
        if s.model is not None:
            raise ValueError("sia.torch.wrap: a job has one wrapped model")
        rule = lr_scaling or default_rule(optimizer)
        if rule not in RULES:
            raise ValueError(f"sia.torch.wrap: lr_scaling {rule!r}: expected one of "
                             + ", ".join(RULES))
        self.module = module.to(s.device)
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.lr_scaling = rule
        self._session = s
        self._params = [p for group in optimizer.param_groups
                        for p in group["params"] if p.requires_grad]
        self._buffers_list = list(self.module.buffers())
        self._acc = None  # id(parameter) -> weighted gradient sum of the step
        self._local_sqr = self._zero()  # sum over micro-steps of |g_a|^2, on the device
        # |bucket|^2 of each reduced bucket of the step, on the device: summed,
        # |g|^2 of the mean gradient.  A list: gloo may complete buckets on
        # several threads, and an append is atomic.
        self._total_sqrs = []
        self._replaying = False  # join_reduction: this rank's buckets are zeros
        self._window = None  # [first bucket launched, last bucket reduced]
        self._prev = None  # the previous step's (gradient, |g|^2, batch version)
        state.apply_model(s, self)
        # DDP makes the replicas start from rank 0's parameters and buffers. It
        # is not a submodule: the wrapper's state is the model's.
        ddp = None
        if s.world > 1:
            ids = [s.device.index] if s.device.type == "cuda" else None
            ddp = s.collective(lambda: DistributedDataParallel(
                self.module, device_ids=ids, broadcast_buffers=False,
                bucket_cap_mb=_BUCKET_BYTES >> 20))
            ddp.register_comm_hook(self, AdaptiveDataParallel._reduce_bucket)
        object.__setattr__(self, "_ddp", ddp)
        self._real_step = functools.partial(type(optimizer).step, optimizer)
        optimizer.step = self._patched_step()
        if scheduler is not None:
            real = scheduler.step

            def scheduler_step(*args, **kwargs):
                if not s.accumulating():
                    return real(*args, **kwargs)

            scheduler.step = scheduler_step
        s.model = self

    def forward(self, *args, **kwargs):
        if self._ddp is None:
            return self.module(*args, **kwargs)
        if self._session.accumulating():
            with self._ddp.no_sync():
                return self._ddp(*args, **kwargs)
        return self._ddp(*args, **kwargs)

    def _patched_step(self):
        def step(closure=None):
            if closure is not None:
                raise ValueError("sia.torch: optimizer.step(closure) is not supported")
            self._micro_step()

        step._with_counter = True  # torch's schedulers need not wrap it
        return step

    def _zero(self):
        return torch.zeros((), dtype=torch.float64, device=self._session.device)

    # ------------------------------------------------------------- steps
    def _micro_step(self):
        s = self._session
        last = s.micro_done()
        if not last:
            self._fold(s.layout, s.micro_count)
            return
        if self._ddp is None:
            for p in self._params:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                acc = self._acc[id(p)] if self._acc is not None else None
                self._combine(p.grad, acc, s.layout, s.micro_count)
                p.grad.div_(s.layout.take)
        self._update(s, s.layout)

    def _fold(self, layout, count):
        """A micro-step before the last: its gradient, weighted, joins the sum."""
        if self._acc is None:
            self._acc = {id(p): torch.zeros_like(p) for p in self._params}
        for p in self._params:
            if p.grad is not None:
                self._combine(p.grad, None, layout, count)
                self._acc[id(p)].add_(p.grad)
                p.grad = None

    def _acc_of(self, params):
        """The step's earlier weighted sum for ``params``, flat; None if none."""
        if self._acc is None:
            return None
        return torch.cat([self._acc[id(p)].reshape(-1) if id(p) in self._acc
                          else torch.zeros(p.numel(), dtype=p.dtype, device=p.device)
                          for p in params])

    def _combine(self, grad, acc, layout, count):
        """``grad`` (one micro-step's local gradient, a parameter's or a
        bucket's) becomes count x grad + ``acc`` (``count``: the micro-batch's
        samples, or their share of the step's); its |grad|^2 joins the
        statistics' local sum when the step is full.  On the device."""
        if count and layout.full:
            self._local_sqr += grad.float().pow(2).sum()
        if count:
            grad.mul_(count)
        else:
            grad.zero_()  # an empty slice: its gradient (NaN) weighs nothing
        if acc is not None:
            grad.add_(acc.view_as(grad))

    def _reduce_bucket(self, bucket):
        """DDP's communication hook for the last micro-step: the bucket's
        weighted sum over this rank's micro-steps divided by the step's
        samples (its share of the mean), summed over the ranks."""
        s = self._session
        buf, layout = bucket.buffer(), s.layout
        measured = layout is not None and layout.full and not self._replaying
        if self._replaying:
            buf.zero_()
        elif layout is None:  # a backward pass outside the loader's steps
            buf.div_(s.world)
        else:
            acc = self._acc_of(bucket.parameters())
            if acc is None:  # weight and share in one pass
                self._combine(buf, None, layout, s.micro_count / layout.take)
            else:
                self._combine(buf, acc, layout, s.micro_count)
                buf.div_(layout.take)

        window = self._window if layout is not None else [0.0, None]
        if window is None:  # the step's first bucket
            window = self._window = [time.monotonic(), None]

        def reduced(fut):
            try:
                out = fut.value()[0]
            except RuntimeError as e:
                lost = s.lost_peer(e)
                die(lost.status, lost.message)
            if measured:
                self._total_sqrs.append(out.float().pow(2).sum())
            window[1] = time.monotonic()
            return out

        reduced.tail = tails.token()  # dropped with the callback (process_group.tails)
        work = s.collective(lambda: dist.all_reduce(buf, async_op=True))
        return work.get_future().then(reduced)

    def join_reduction(self):
        """This rank failed inside a micro-step (out of memory): the other
        ranks all-reduce the step's gradient in the backward pass of its last
        micro-step, so this rank takes part with zeros, through DDP's own
        buckets, before it votes.  Nothing to do with one rank."""
        if self._ddp is None:
            return
        self._replaying = True
        params = [p for p in self.module.parameters() if p.requires_grad]
        for p in params:
            p.grad = None
        try:
            self._ddp.reducer.prepare_for_backward([])
            sum((p.reshape(-1)[:1] * 0).sum() for p in params).backward()
        except RuntimeError as e:
            raise SiaError(OUT_OF_MEMORY, f"rank {self._session.rank}: out of memory "
                           "inside the backward pass, after its gradient reduction "
                           "began: the ranks cannot agree on a restart "
                           f"({first_line(e)})") from None

    def _update(self, s, layout):
        t0 = time.monotonic()
        total_sqr = None  # |g|^2, from the hook's buckets (None: from the gradients)
        if self._ddp is not None:
            total_sqr = torch.stack(self._total_sqrs).double().sum() \
                if self._total_sqrs else 0.0
        votes = s.vote(self._local_sqr, 0.0 if total_sqr is None else total_sqr)
        if votes[1] > 0:
            s.out_of_memory("out of memory on another rank")
        sync = time.monotonic() - t0
        if self._window is not None and self._window[1] is not None:
            sync += self._window[1] - self._window[0]
        self._window = None
        grads = [p.grad for p in self._params if p.grad is not None]
        gain = self._statistics(s, layout, votes[2],
                                None if total_sqr is None else votes[7], grads)
        factor = lr_factor(self.lr_scaling, layout.take, s.init_batch, gain)
        groups = self.optimizer.param_groups
        base = [g["lr"] for g in groups]
        for g in groups:
            g["lr"] = g["lr"] * factor
        try:
            self._real_step()
        finally:
            for g, lr in zip(groups, base):
                g["lr"] = lr
        self.optimizer._step_count = getattr(self.optimizer, "_step_count", 0) + 1
        self._acc, self._local_sqr, self._total_sqrs = None, self._zero(), []
        if s.world > 1 and self._buffers_list:
            t1 = time.monotonic()
            bufs = self._buffers_list
            s.collective(lambda: _coalesced(bufs, _buckets(bufs),
                                            lambda t: dist.broadcast(t, 0)))
            sync += time.monotonic() - t1
        s.end_step(votes, sync, gain)

    def _statistics(self, s, layout, local_sqr_sum, total_sqr, grads):
        """Feeds the step's gradients to the gradient noise scale; returns the
        step's gain at its batch.  ``local_sqr_sum``: sum |g_i|^2 over the
        step's micro-batch gradients of every rank; ``total_sqr``: |g|^2 of
        the mean gradient ``grads``, or None to compute it here."""
        gns, b0 = s.gns, s.init_batch
        n = layout.world * layout.micro
        if not layout.full:
            self._prev = None
        elif n > 1:
            total = _sqr(grads) if total_sqr is None else total_sqr
            gns.update(local_sqr_sum / n, total, n, n * layout.local_bsz / b0)
        else:
            total = _sqr(grads)
            # A pair needs the previous step, at the same batch (a batch plan
            # between them would mix two variances).
            if self._prev is not None and self._prev[2] == s.config_version:
                prev, prev_sqr, _ = self._prev
                pair = _sqr([(g + q) / 2 for g, q in zip(grads, prev)])
                gns.update_pair(prev_sqr, total, pair, layout.local_bsz / b0)
            else:
                gns.pair = True
            self._prev = ([g.detach().clone() for g in grads], total, s.config_version)
        return gns.gain(layout.take, b0)
