"""A small sia.torch job for the tests.

Trains a regression model (--model mlp) or a linear model without bias at
w = 0 (--model linear: per-sample gradients with analytic mean and variance)
on synthetic data.  Test hooks: --record (sample ids per rank), --dump (rank 0
writes a checksum of the model and optimizer state when a checkpoint is taken
and after a restore), --slow (seconds per step), --oom-above (a micro-batch
larger than this raises CUDA's out-of-memory error on the last rank),
--journal (rank 0 notes the script's own bookkeeping: "start STEP LAST_EPOCH"
after the restore, "step STEP LAST_EPOCH" after each optimizer.step() and
scheduler.step(), "epoch E BATCHES MEAN_LOSS" at each epoch's end -- a mean
that divides by the epoch's batches -- and "end STEP LAST_EPOCH"), --term-at
(rank 0 sends itself SIGTERM in the step that ends at this step), --plans
"STEP:LOCAL_BSZ:ACCUM_STEPS,..." (rank 0 writes batch plan i to SIA_BATCH_PLAN
after step STEP, so it applies after the next step; the journal notes "eval
L", the loss over the whole dataset, there), --progress (the training
ends once sia's progress, in steps at B0, reaches it), and at the end the loss
over the whole dataset ("loss L" in the journal).
"""

import argparse
import hashlib
import json
import os
import signal
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import TensorDataset

import sia.torch


def state_checksum(model, optimizer):
    h = hashlib.sha256()

    def walk(x):
        if isinstance(x, torch.Tensor):
            h.update(x.detach().cpu().contiguous().numpy().tobytes())
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                h.update(str(k).encode())
                walk(x[k])
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        else:
            h.update(repr(x).encode())

    walk(model.state_dict())
    walk(optimizer.state_dict())
    return h.hexdigest()[:16]


class Probe:
    """Registered state that dumps the checksum whenever it is saved."""

    def __init__(self, path, model, optimizer):
        self.path, self.model, self.optimizer = path, model, optimizer

    def dump(self, what):
        if self.path and sia.torch.current().rank == 0:
            with open(self.path, "a") as f:
                f.write(f"{what} {sia.torch.current().step} "
                        f"{state_checksum(self.model, self.optimizer)}\n")

    def state_dict(self):
        self.dump("save")
        return {}

    def load_state_dict(self, state):
        self.dump("load")


def data(args):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(args.dataset_size, args.features, generator=g)
    if args.model == "linear":
        w = torch.randn(args.features, 1, generator=g)
        w /= w.norm()
        y = x @ w + args.noise * torch.randn(args.dataset_size, 1, generator=g)
    else:
        teacher = torch.randn(args.features, 4, generator=g)
        y = torch.tanh(x @ teacher).sum(1, keepdim=True)
    return TensorDataset(x, y, torch.arange(args.dataset_size))


class OutOfMemoryAbove(nn.Module):
    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        last = sia.torch.current().rank == sia.torch.current().world - 1
        if last and x.shape[0] > self.limit:
            raise torch.cuda.OutOfMemoryError(
                f"CUDA out of memory (simulated at micro-batch {x.shape[0]})")
        return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=("mlp", "linear"), default="mlp")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--lr-scaling")
    p.add_argument("--features", type=int, default=8)
    p.add_argument("--noise", type=float, default=1.0)
    p.add_argument("--dataset-size", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int)
    p.add_argument("--checkpoint-steps", type=int, default=0)
    p.add_argument("--record")
    p.add_argument("--dump")
    p.add_argument("--slow", type=float, default=0.0)
    p.add_argument("--oom-above", type=int)
    p.add_argument("--journal")
    p.add_argument("--term-at", type=int)
    p.add_argument("--drop-last", action="store_true")
    p.add_argument("--plans", default="")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--progress", type=float)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    device = sia.torch.init()
    if args.model == "linear":
        model = nn.Linear(args.features, 1, bias=False)
        nn.init.zeros_(model.weight)
    else:
        model = nn.Sequential(nn.Linear(args.features, 32), nn.Tanh(), nn.Linear(32, 1))
    if args.oom_above is not None:
        model = nn.Sequential(OutOfMemoryAbove(args.oom_above), model)
    if args.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda n: 1 / (1 + 0.01 * n))
    model = sia.torch.wrap(model, optimizer, scheduler, lr_scaling=args.lr_scaling)
    sia.torch.register_state("probe", Probe(args.dump, model.module, optimizer))
    dataset = data(args)
    loader = sia.torch.ElasticDataLoader(dataset, batch_size=args.batch_size,
                                         drop_last=args.drop_last)
    plans = {int(p.split(":")[0]): (i + 1, *map(int, p.split(":")[1:]))
             for i, p in enumerate(args.plans.split(",")) if p}
    rank = int(os.environ.get("RANK", "0"))
    record = open(f"{args.record}.{rank}", "a", buffering=1) if args.record else None
    journal = open(args.journal, "a", buffering=1) if args.journal and rank == 0 \
        else None

    def note(what):
        if journal:
            journal.write(f"{what} {sia.torch.current().step} {scheduler.last_epoch}\n")

    def note_loss(what):
        if journal:
            x, y, _ = dataset.tensors
            with torch.no_grad():
                journal.write(f"{what} {0.5 * F.mse_loss(model(x), y).item()}\n")

    note("start")
    for epoch in sia.torch.remaining_epochs_until(args.epochs, args.steps,
                                                  args.checkpoint_steps):
        loss_sum, batches = 0.0, 0
        for x, y, ids in loader:
            optimizer.zero_grad()
            loss = 0.5 * F.mse_loss(model(x.to(device)), y.to(device))
            loss.backward()
            if rank == 0 and args.term_at == sia.torch.current().step + 1:
                os.kill(os.getpid(), signal.SIGTERM)  # the flag goes on this vote
            optimizer.step()
            scheduler.step()
            # The script's own bookkeeping after the step: it runs for every step.
            if record:
                record.write("".join(f"{i}\n" for i in ids.tolist()))
            sia.torch.record_loss(loss)
            loss_sum, batches = loss_sum + float(loss), batches + 1
            note("step")
            if rank == 0 and sia.torch.current().step in plans:
                note_loss("eval")
                write_plan(*plans.pop(sia.torch.current().step))
            if args.slow:
                time.sleep(args.slow)
            if args.progress and sia.torch.current().progress >= args.progress:
                break
        if args.progress and sia.torch.current().progress >= args.progress:
            break
        if journal:
            journal.write(f"epoch {epoch} {batches} {loss_sum / batches}\n")
    note("end")
    note_loss("loss")


def write_plan(plan, local_bsz, accum_steps):
    s, path = sia.torch.current(), os.environ["SIA_BATCH_PLAN"]
    with open(path + ".tmp", "w") as f:
        json.dump({"type": "batch_plan", "job": s.contract.job, "round": s.contract.round,
                   "plan": plan, "local_bsz": local_bsz, "accum_steps": accum_steps,
                   "batch_size": local_bsz * s.world * (accum_steps + 1)}, f)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
