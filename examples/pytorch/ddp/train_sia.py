"""A classifier trained with DistributedDataParallel, launched by torchrun.

train_ddp.py is an ordinary DDP script (torchrun --nproc-per-node=2 train_ddp.py);
train_sia.py is the same script converted to a sia job as sia-torch(7) says (diff
them: a few lines).  The inputs are seeded noise that a fixed random teacher labels,
so the loss falls as the model learns.
"""

import argparse

import sia.torch
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def synthetic_data(size, features=32, classes=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = torch.randn(size, features, generator=g)
    teacher = torch.randn(features, classes, generator=g)
    return TensorDataset(inputs, (inputs @ teacher).argmax(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--batch-size", type=int, default=128, help="the global batch")
    p.add_argument("--dataset-size", type=int, default=4096)
    args = p.parse_args()

    cuda = torch.cuda.is_available()
    sia.torch.init()
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{rank % torch.cuda.device_count()}" if cuda else "cpu")
    torch.manual_seed(0)
    dataset = synthetic_data(args.dataset_size)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    model = sia.torch.wrap(model, optimizer, scheduler)
    loader = sia.torch.ElasticDataLoader(dataset, args.batch_size, shuffle=True)

    for epoch in sia.torch.remaining_epochs_until(args.epochs):
        model.train()
        loss_sum, samples = 0.0, 0  # this rank's, for the epoch's average
        for inputs, labels in loader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = F.cross_entropy(outputs, labels)
            loss.backward()
            optimizer.step()
            sia.torch.record_loss(loss)
            loss_sum += F.cross_entropy(outputs.detach(), labels, reduction="sum").item()
            samples += len(labels)
        scheduler.step()
        totals = torch.tensor([loss_sum, samples], device=device)
        dist.all_reduce(totals)
        loss_sum, samples = totals.tolist()
        if rank == 0:
            print(f"epoch {epoch}: loss {loss_sum / samples:.4f}, "
                  f"lr {scheduler.get_last_lr()[0]:.4g}, {world} ranks", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
