"""Data-parallel training: gradient synchronisation, accumulation, gradient
statistics and learning-rate scaling around a model and its optimizer.

:class:`AdaptiveDataParallel` (made by :func:`sia.torch.wrap`) wraps the model
and takes over ``optimizer.step()``: the script calls it once for every batch
the :class:`~sia.torch.data.ElasticDataLoader` yields, and it

  * on a micro-step before the last of an optimizer step, keeps the gradient
    (weighted by its number of samples) and returns without synchronising;
  * on the last, takes the step's vote (stop, out of memory, batch plan), sums
    the weighted gradients of every micro-step of every rank (bucketed
    all-reduce) and divides by the step's samples -- the exact mean gradient,
    also for an uneven last batch of an epoch and for ranks with no samples;
  * measures the gradient statistics from the micro-batch gradients as Pollux
    does (:mod:`sia.gradient_noise`);
  * scales every parameter group's learning rate for the one update (AdaScale
    gain, sqrt(B / B0), B / B0 or 1) on top of whatever the scheduler set, and
    restores it after;
  * makes the replicas' buffers (batch-norm statistics) rank 0's.

The loss must be a mean over the micro-batch (PyTorch's default reduction).
A scheduler given to :func:`sia.torch.wrap` is checkpointed and steps only
after real updates.  Not thread-safe: the training thread calls it.
"""

import functools
import math
import time

import torch
import torch.distributed as dist

from sia.torch import runtime, state

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
        self._grad_buckets = _buckets(self._params)
        self._buffers_list = list(self.module.buffers())
        self._acc = None  # weighted gradient sums across micro-steps
        self._local_sqr = 0.0  # sum over this rank's micro-steps of |g_a|^2
        self._prev = None  # the previous step's (gradient, |g|^2, batch version)
        state.apply_model(s, self)
        if s.world > 1:  # the replicas start from rank 0's parameters
            everything = [p.data for p in self.module.parameters()] + self._buffers_list
            s.collective(lambda: _coalesced(everything, _buckets(everything),
                                            lambda t: dist.broadcast(t, 0)))
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
        return self.module(*args, **kwargs)

    def _patched_step(self):
        def step(closure=None):
            if closure is not None:
                raise ValueError("sia.torch: optimizer.step(closure) is not supported")
            self._micro_step()

        step._with_counter = True  # torch's schedulers need not wrap it
        return step

    # ------------------------------------------------------------- steps
    def _micro_step(self):
        s = self._session
        last = s.micro_done()
        layout, count = s.layout, s.micro_count
        for p in self._params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        if layout.micro == 1:
            self._local_sqr = _sqr([p.grad for p in self._params]) if layout.full \
                else 0.0
            for p in self._params:
                if count:
                    p.grad.mul_(count)
                else:
                    p.grad.zero_()
        else:
            self._fold(layout, count)
            if not last:
                return
            for p, acc in zip(self._params, self._acc):
                p.grad = acc
            self._acc = None
        self._update(s, layout)

    def _fold(self, layout, count):
        if self._acc is None:
            self._acc = [torch.zeros_like(p) for p in self._params]
            self._local_sqr = 0.0
        grads = [p.grad for p in self._params]
        if count and layout.full:
            self._local_sqr += _sqr(grads)
        if count:
            for acc, g in zip(self._acc, grads):
                acc.add_(g, alpha=count)
        for p in self._params:
            p.grad = None

    def _update(self, s, layout):
        t0 = time.monotonic()
        votes = s.vote(self._local_sqr)
        if votes[1] > 0:
            s.out_of_memory("out of memory on another rank")
        grads = [p.grad for p in self._params]
        if s.world > 1:
            def reduce(flat):
                dist.all_reduce(flat)
                flat.div_(layout.take)

            s.collective(lambda: _coalesced(grads, self._grad_buckets, reduce))
        else:
            for g in grads:
                g.div_(layout.take)
        sync = time.monotonic() - t0
        gain = self._statistics(s, layout, votes[2], grads)
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
        if s.world > 1 and self._buffers_list:
            t1 = time.monotonic()
            bufs = self._buffers_list
            s.collective(lambda: _coalesced(bufs, _buckets(bufs),
                                            lambda t: dist.broadcast(t, 0)))
            sync += time.monotonic() - t1
        s.end_step(votes, sync, gain)

    def _statistics(self, s, layout, local_sqr_sum, grads):
        """Feeds the step's gradients to the gradient noise scale; returns the
        step's gain at its batch."""
        gns, b0 = s.gns, s.init_batch
        n = layout.world * layout.micro
        if not layout.full:
            self._prev = None
        elif n > 1:
            gns.update(local_sqr_sum / n, _sqr(grads), n, n * layout.local_bsz / b0)
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
