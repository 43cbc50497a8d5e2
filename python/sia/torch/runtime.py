"""The job's session: the step vote, stops, out-of-memory restarts, profiling.

One :class:`Session` per process, started on first use (:func:`session`, which
``sia.torch.init()`` and every other entry point call): it reads the contract,
joins the other ranks (:mod:`sia.torch.process_group`) and restores the
checkpoint.  It owns everything that outlives a step: the batch configuration
(local batch, micro-steps), the data position, the step and progress counters,
the gradient statistics, the reports (:mod:`sia.torch.reporting`) and the
registered state.

Promises:
  * SIGTERM/SIGINT before the rendezvous has completed exit 75 at once; after
    it, they set a flag that travels on the next step's vote, so that every
    rank stops after the same step, at the next step boundary of the script's
    loop (:meth:`Session.boundary`: its code after ``optimizer.step()`` has
    run): rank 0 checkpoints, every rank learns whether that worked, and all
    exit 75 (or with rank 0's error status).  When that boundary is the end of
    the training, the job ends "done" instead.
  * Every error the library detects ends the process with one line on stderr,
    ``sia.torch: error: ...``, and the contract's status (sia-worker(7)); a
    lost peer during a collective is status 69.
  * A batch plan (SIA_BATCH_PLAN) read by rank 0 reaches every rank on the
    step's vote and takes effect on all of them after the same step.
  * An out-of-memory error in a micro-step, on any rank, is agreed on the
    step's vote; every rank then restarts itself in place (same process ids,
    ``exec``) from a checkpoint of the step boundary, with at most half the
    local batch and proportionally more micro-steps (the global batch kept);
    at local batch 1 the job exits 71.
  * Step boundaries are where the script asks the loader for its next batch
    or the epoch loop for its next epoch (never inside ``optimizer.step()``):
    there the agreed stop, the rung and the periodic checkpoint happen, so a
    checkpoint holds the scheduler and registered state after their step.  A
    data position at the end of its epoch (for the current batch) is always
    taken as the start of the next epoch (:meth:`Session.settle_epoch`).
  * A trial of an app (SIA_STOP_FRACTION > 0) stops at the first step boundary
    where :meth:`Session.fraction` reaches it and the training is not done:
    every rank at the same step (the fraction is a function of the step and
    data position, which the step protocol keeps equal on every rank), as a
    preemption does, with rank 0's last report's reason "rung"; a restart at
    or past its rung stops before its first step, one below trains on.
  * Profiling (SIA_PROFILE_STEPS=N): 3 warm-up steps, N measured ones, one
    "profile" report, exit 0; an out-of-memory error there exits 71 at once.
Not thread-safe: the training thread drives it; the signal handlers only set a
flag (or exit before the rendezvous).
"""

import math
import os
import sys
import time

import torch
import torch.distributed as dist

from sia.batch_plan import BatchPlanReader
from sia.checkpoint import load_latest
from sia.contract import read_contract
from sia.gradient_noise import GradientNoiseScale
from sia.positions import layout_step
from sia.status import (DATA, OUT_OF_MEMORY, PREEMPTED, SOFTWARE,
                        UNAVAILABLE, SiaError)
from sia.torch import process_group, state
from sia.torch.diagnostics import PROG, die, first_line, log
from sia.torch.reporting import Reporter

# Steps left out of the timings: the first after a start or a batch change.
_WARMUP_STEPS = 1
_PROFILE_WARMUP_STEPS = 3

_session = None


def session():
    """The session of this process, started (rendezvous, restore) on first use."""
    global _session
    if _session is None:
        _install_excepthook()
        try:
            contract = read_contract()
        except SiaError as e:
            die(e.status, e.message)
        _session = Session(contract)
        _session.start()
    return _session


def _is_out_of_memory(error):
    return isinstance(error, torch.cuda.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "CUDA out of memory" in str(error))


def _install_excepthook():
    default = sys.excepthook

    def hook(kind, error, tb):
        if isinstance(error, SiaError):
            die(error.status, error.message)
        if _session is not None and _is_out_of_memory(error):
            _session.out_of_memory(first_line(error))
        default(kind, error, tb)

    sys.excepthook = hook


def halved(local_bsz, micro):
    """(local batch, micro-steps) with the same product and at most half the
    local batch, or None at local batch 1."""
    total = local_bsz * micro
    for m in range(2 * micro, total + 1):
        if total % m == 0:
            return total // m, m
    return None


class Session:
    def __init__(self, contract):
        c = contract
        self.contract = c
        self.rank, self.world = c.rank, c.world_size
        self.root = c.rank == 0
        self.profiling = c.profile_steps > 0
        self.device = None
        # The batch configuration; local_bsz is None until the loader gives the
        # script's default (when the scheduler gave none).
        self.local_bsz = c.local_bsz
        self.micro = c.micro_steps
        self.config_version = 0
        self.init_batch = c.init_batch_size
        # What a checkpoint keeps.
        self.step = 0
        self.progress = 0.0
        self.samples = 0
        self.epoch = 0
        self.position = 0
        self.seed = None
        self.gns = GradientNoiseScale()
        self.plan = 0
        self.restored = None
        self.states = {}  # name -> object with state_dict / load_state_dict
        self.model = None  # the AdaptiveDataParallel wrapper
        self.max_steps = None
        self.checkpoint_steps = 0
        # The training's limits, for the fraction: remaining_epochs_until's
        # epochs and the loader's dataset length (None until they are known).
        self.epochs = None
        self.epoch_len = None
        self.drop_last = False
        self.stopping = False  # the stop vote passed: stop at the next boundary
        self.checkpointed = None  # the step of the last checkpoint written
        # The step in progress.
        self.layout = None
        self.micro_index = -1
        self.micro_count = 0
        self.awaiting_step = False
        self.micro_times = []
        self.mark = None  # when the current micro-step began
        self.steps_run = 0
        self.warm_from = _PROFILE_WARMUP_STEPS if self.profiling else _WARMUP_STEPS
        self.stop_flag = False
        self.plans = None
        self.reporter = None

    # ----------------------------------------------------------- start-up
    def start(self):
        c = self.contract
        process_group.handle_signals(PROG, self.rank)
        try:
            self.device = process_group.choose_device(c)
            if self.device.type == "cuda":
                torch.cuda.set_device(self.device)
            self.reporter = Reporter(c, self.root)
            if self.root:
                for w in c.warnings:
                    log("warning: " + w, self.rank)
                self.plans = BatchPlanReader(
                    c.batch_plan, c.round, self.world,
                    warn=lambda m: log("warning: " + m, self.rank))
            if self.world > 1:
                log(f"round {c.round}: joining {self.world} rank(s) at "
                    f"{c.master_addr}:{c.master_port}", self.rank)
            process_group.join(c, self.device)
            process_group.handle_signals(PROG, self.rank, on_stop=self._stop)
            self._restore()
        except SiaError as e:
            die(e.status, e.message)

    def _stop(self):
        self.stop_flag = True

    def _restore(self):
        c = self.contract
        if not c.restore or self.profiling:
            return
        verdict = [None]
        if self.root:
            try:
                verdict[0] = ("ok", load_latest(
                    c.ckpt_dir, warn=lambda why: log(f"warning: {why}", self.rank)))
            except SiaError as e:
                verdict[0] = ("error", e.status, e.message)
        self.collective(lambda: dist.broadcast_object_list(verdict, src=0))
        v = verdict[0]
        if v[0] == "error":
            raise SiaError(v[1], v[2] if self.root else f"rank 0: {v[2]}")
        if v[1] is None:
            if self.root:
                log(f"warning: SIA_RESTORE=1 but {c.ckpt_dir} has no checkpoint: "
                    "starting from step 0", self.rank)
            return
        self.restored = state.decode(v[1], self.device)
        state.apply_session(self, self.restored)
        if self.root:
            log(f"restored step {self.step} (epoch {self.epoch}, {self.position} "
                f"samples into it) from {c.ckpt_dir}", self.rank)

    # ------------------------------------------------------ configuration
    def set_default_batch(self, batch_size):
        """The script's batch size (the loader's): B0 unless the contract or
        the checkpoint says otherwise, and the batch when the scheduler gave
        none."""
        if self.init_batch is None:
            self.init_batch = float(batch_size)
        if self.local_bsz is None:
            per = self.world * self.micro
            self.local_bsz = max(1, batch_size // per)
            if self.local_bsz * per != batch_size and self.root:
                log(f"warning: batch size {batch_size} is not a multiple of "
                    f"{per} ranks x micro-steps; training with "
                    f"{self.local_bsz * per}", self.rank)
        if self.root and self.steps_run == 0:
            c = self.contract
            log(f"job {c.job or '-'} round {c.round}: {self.world} rank(s) on "
                f"{self.device}, local batch {self.local_bsz} x {self.micro} "
                f"micro-step(s), batch {self.batch_size}, from step {self.step}",
                self.rank)

    @property
    def batch_size(self):
        return self.local_bsz * self.world * self.micro

    def steps_done(self):
        return (not self.profiling and self.max_steps is not None
                and self.max_steps > 0 and self.step >= self.max_steps)

    def fraction(self):
        """Of the training the limits ask for, the part done, 0 to 1: the
        larger of step / max_steps and (epoch x dataset length + position) /
        (epochs x dataset length) (the samples taken, drop_last's skipped ones
        counted), as the reference worker's report defines it; None before the
        limits are known."""
        parts = []
        if self.max_steps is not None and self.max_steps > 0:
            parts.append(self.step / self.max_steps)
        if self.epochs is not None and self.epochs > 0 and self.epoch_len:
            n = self.epoch_len
            parts.append((self.epoch * n + self.position) / (self.epochs * n))
        return min(1.0, max(parts)) if parts else None

    def at_rung(self):
        """A trial reached its rung (SIA_STOP_FRACTION) before the end."""
        stop = self.contract.stop_fraction
        if stop <= 0 or self.profiling:
            return False
        f = self.fraction()
        return f is not None and stop <= f < 1.0

    def epoch_over(self):
        """The loader's epoch has no step left at the current batch (False
        before a loader exists)."""
        return self.epoch_len is not None and layout_step(
            self.position, self.epoch_len, self.local_bsz, self.world, self.micro,
            self.drop_last) is None

    def settle_epoch(self):
        """A position at the end of its epoch is the next epoch's start: a
        restore (or a stop) on an epoch boundary never yields an empty epoch,
        whatever the batch (drop_last's partial batch included)."""
        if self.position > 0 and self.epoch_over():
            self.epoch, self.position = self.epoch + 1, 0

    def boundary(self):
        """A step boundary of the script's loop (its code for the last step has
        run): the agreed stop (exit 75), the rung (exit 75, report "rung"),
        the periodic checkpoint.  Every rank decides alike: the stop comes
        from the step's vote, the rest from the step and data position."""
        if self.profiling:
            return
        if self.stopping:
            self.finish(preempted=True)
        if self.at_rung():
            self.finish(preempted=True, reason="rung")
        if self.checkpoint_steps and self.contract.ckpt_dir and self.step > 0 and \
                self.step % self.checkpoint_steps == 0 and self.checkpointed != self.step:
            self.checkpoint()

    # ----------------------------------------------------- the step protocol
    def begin_micro(self, layout, index, count):
        if self.awaiting_step:
            raise SiaError(SOFTWARE, "the previous batch had no optimizer.step(): "
                           "call it once for every batch the loader yields")
        if index == 0:
            self.micro_times = []
        self.layout, self.micro_index, self.micro_count = layout, index, count
        self.awaiting_step = True
        if self.mark is None:
            self.mark = time.monotonic()

    def record_loss(self, loss):
        """The loss of the current micro-batch (before or after its
        optimizer.step()), weighted by its samples, for rank 0's reports."""
        if self.micro_count > 0:
            value = float(loss)
            if not math.isfinite(value):
                raise SiaError(DATA, f"rank {self.rank}: training diverged at step "
                               f"{self.step}: the loss is not finite (lower the "
                               "learning rate)")
            self.reporter.interval.loss_sum += value * self.micro_count
            self.reporter.interval.loss_count += self.micro_count

    def micro_done(self):
        """optimizer.step() was called for the current micro-step; True when it
        was the step's last."""
        if not self.awaiting_step:
            raise SiaError(SOFTWARE, "optimizer.step() without a batch from "
                           "sia.torch.ElasticDataLoader")
        self.awaiting_step = False
        now = time.monotonic()
        self.micro_times.append(now - self.mark)
        self.mark = now
        return self.micro_index == self.layout.micro - 1

    def accumulating(self):
        return self.layout is not None and self.micro_index < self.layout.micro - 1

    def collective(self, fn):
        """Runs a collective; a failure of the process group is a lost peer."""
        try:
            return fn()
        except RuntimeError as e:
            if _is_out_of_memory(e):
                raise
            raise self.lost_peer(e) from None

    def lost_peer(self, error):
        """The error of a collective that failed: status 69."""
        return SiaError(UNAVAILABLE,
                        f"rank {self.rank}: a peer was lost ({first_line(error)})")

    def vote(self, local_sqr, total_sqr=0.0, out_of_memory=False):
        """The step's vote: [stop, out of memory, sum |g_i|^2, plan, batch,
        local batch, micro-steps, |g|^2], summed over the ranks (flags > 0
        mean some rank raised them; the plan and |g|^2 are rank 0's).
        ``local_sqr`` and ``total_sqr`` are numbers or tensors on the device;
        the vote is the step's one read of them."""
        plan = self.plans.poll() if self.plans is not None else None
        v = [float(self.stop_flag), float(out_of_memory), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        if plan is not None:
            v[3:7] = [plan.plan, plan.batch_size, plan.local_bsz, plan.accum_steps + 1]
        if self.world == 1:
            v[2], v[7] = float(local_sqr), float(total_sqr)
            return v
        dev = self.device if self.device.type == "cuda" else None
        t = torch.tensor(v, dtype=torch.float64, device=dev)
        t[2] = local_sqr
        if self.root:
            t[7] = total_sqr
        self.collective(lambda: dist.all_reduce(t))
        return t.tolist()

    def end_step(self, votes, sync_time, gain):
        """After the update (``sync_time``: seconds in collectives; ``gain``:
        the step's progress at B0): counters, timings, reports, plans, stops."""
        layout = self.layout
        self.layout = None
        self.step += 1
        self.steps_run += 1
        self.position += layout.take
        self.samples += layout.take
        self.progress += gain
        now = time.monotonic()
        iv = self.reporter.interval
        iv.steps += 1
        if self.steps_run > self.warm_from and layout.full:
            # One optimizer step without accumulation: a micro-step plus the
            # synchronisation and the update after the last one.
            micro = sum(self.micro_times) / len(self.micro_times)
            step_time = micro + (now - self.mark)
            iv.timed += 1
            iv.step_time += step_time
            iv.sync_time += min(sync_time, step_time)
        self.mark = now
        if self.profiling:
            if self.steps_run >= _PROFILE_WARMUP_STEPS + self.contract.profile_steps:
                self.reporter.send(self, "profile")
                self.reporter.close()
                sys.stdout.flush()
                os._exit(0)
            return
        if votes[3] > 0:
            self._apply_plan(*(int(round(x)) for x in votes[3:7]))
        if votes[0] > 0:
            self.stopping = True  # at the boundary, after the script's step code
        if self.reporter.due():
            self.reporter.send(self, "interval")

    def _apply_plan(self, plan, batch, local_bsz, micro):
        self.reporter.batch_changing(self)
        self.plan = plan
        if self.plans is not None:
            self.plans.applied = plan
        self.local_bsz, self.micro = local_bsz, micro
        self.config_version += 1
        self.warm_from = self.steps_run + _WARMUP_STEPS
        if self.root:
            log(f"batch plan {plan}: local batch {local_bsz} x {micro} micro-step(s), "
                f"batch {batch}, from step {self.step}", self.rank)
        self.reporter.send(self, "batch")

    # --------------------------------------------------------------- ends
    def checkpoint(self):
        """Rank 0 writes a checkpoint; every rank learns how that went (a
        failure raises its status everywhere).  Collective."""
        verdict = [None]
        if self.root and self.contract.ckpt_dir:
            try:
                path = state.write_checkpoint(self)
                verdict[0] = ("ok", path)
            except SiaError as e:
                verdict[0] = ("error", e.status, e.message)
        else:
            verdict[0] = ("ok", None)
        if self.world > 1:
            self.collective(lambda: dist.broadcast_object_list(verdict, src=0))
        v = verdict[0]
        if v[0] == "error":
            raise SiaError(v[1], v[2] if self.root else f"rank 0: {v[2]}")
        self.checkpointed = self.step
        return v[1]

    def finish(self, preempted, reason=None):
        """The end of training: checkpoint, last report (``reason``, else
        "preempted" or "done"); exit 75 if preempted."""
        path = self.checkpoint()
        if self.root:
            what = reason or ("preempted" if preempted else "done")
            where = f": checkpoint {path}" if path else ""
            at = f" (fraction {self.fraction():.4g})" if reason == "rung" else ""
            log(f"{what} at step {self.step}{at}{where}", self.rank)
            self.reporter.send(self, what)
        if preempted:
            sys.stdout.flush()
            os._exit(PREEMPTED)

    def out_of_memory(self, what):
        """A micro-step ran out of device memory on this rank (or on another:
        called from the step's vote).  Never returns."""
        try:
            if self.profiling:
                raise SiaError(OUT_OF_MEMORY, f"out of memory at local batch "
                               f"{self.local_bsz} ({what})")
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            if self.awaiting_step:
                # This rank failed inside a micro-step: it still owes the
                # step's reduction and its vote.
                self.awaiting_step = False
                if self.model is not None:
                    self.model.join_reduction()
                self.vote(0.0, out_of_memory=True)
            self._restart_smaller(what)
        except SiaError as e:
            die(e.status, e.message)

    def _restart_smaller(self, what):
        smaller = halved(self.local_bsz, self.micro)
        if smaller is None:
            raise SiaError(OUT_OF_MEMORY, f"rank {self.rank}: out of memory at local "
                           f"batch 1: the model does not fit ({what})")
        if not self.contract.ckpt_dir:
            raise SiaError(OUT_OF_MEMORY, f"out of memory at local batch "
                           f"{self.local_bsz}; without SIA_CKPT_DIR sia.torch cannot "
                           f"restart at {smaller[0]} ({what})")
        self.layout = None  # the failed step is not taken
        self.checkpoint()
        local, micro = smaller
        if self.root:
            log(f"out of memory at local batch {self.local_bsz}: restarting with "
                f"local batch {local} x {micro} micro-step(s), batch "
                f"{self.batch_size}", self.rank)
        env = dict(os.environ, SIA_LOCAL_BSZ=str(local),
                   SIA_ACCUM_STEPS=str(micro - 1),
                   SIA_BATCH_SIZE=str(self.batch_size), SIA_RESTORE="1")
        self.collective(dist.barrier)
        dist.destroy_process_group()
        self.reporter.close()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            os.execve(sys.executable, sys.orig_argv, env)
        except OSError as e:
            raise SiaError(OUT_OF_MEMORY, f"cannot restart {sys.executable}: "
                           f"{e.strerror}") from None
