"""A user's DistributedDataParallel script, for the tests, in its two forms.

--mode ddp is plain DDP: init_process_group, DistributedDataParallel, a
DistributedSampler (no shuffling), a StepLR stepped once per epoch and the
epoch's average loss, all-reduced, printed by rank 0.  --mode sia is the same
script converted as sia-torch(7) says: sia.torch.init, sia.torch.wrap,
ElasticDataLoader (no shuffling), remaining_epochs_until, record_loss.  At the
same global batch both take the same samples in every step (DDP's rank r the
samples r, r + W, ...; sia's rank r a contiguous slice), so they train to the
same parameters.

Rank 0 prints "epoch E: loss L" (L in full) after each epoch and, with --save,
saves the model's state at the end.  The model and the data are functions of
fixed seeds (:func:`build_model`, :func:`build_data`), so the tests rebuild
them to compute gradients by hand.  The model holds 1.3 MB of parameters, more
than DDP's first bucket (1 MiB): its gradient is reduced in two buckets.
"""

import argparse

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

CLASSES = 4


def build_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(8 * 8 * 8, 640), nn.Tanh(), nn.Linear(640, CLASSES))


def build_data(size):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(size, 1, 16, 16, generator=g)
    teacher = torch.randn(16 * 16, CLASSES, generator=g)
    return TensorDataset(x, (x.flatten(1) @ teacher).argmax(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=("ddp", "sia"), required=True)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, help="sia: max_steps")
    p.add_argument("--batch-size", type=int, default=32, help="the global batch")
    p.add_argument("--dataset-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--save")
    args = p.parse_args()
    torch.set_num_threads(1)
    sia = args.mode == "sia"
    if sia:
        import sia.torch

        sia.torch.init()
    else:
        dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model, dataset = build_model(), build_data(args.dataset_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    if sia:
        model = sia.torch.wrap(model, optimizer, scheduler)
        loader = sia.torch.ElasticDataLoader(dataset, args.batch_size, shuffle=False)
        epochs = sia.torch.remaining_epochs_until(args.epochs, args.steps)
    else:
        model = DistributedDataParallel(model)
        loader = DataLoader(dataset, args.batch_size // world,
                            sampler=DistributedSampler(dataset, shuffle=False))
        epochs = range(args.epochs)

    for epoch in epochs:
        loss_sum, samples = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            optimizer.step()
            if sia:
                sia.torch.record_loss(loss)
            loss_sum += F.cross_entropy(out.detach(), y, reduction="sum").item()
            samples += len(y)
        scheduler.step()
        totals = torch.tensor([loss_sum, samples], dtype=torch.float64)
        dist.all_reduce(totals)
        if rank == 0:
            print(f"epoch {epoch}: loss {float(totals[0] / totals[1])!r}", flush=True)
    if rank == 0 and args.save:
        torch.save(model.module.state_dict(), args.save)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
