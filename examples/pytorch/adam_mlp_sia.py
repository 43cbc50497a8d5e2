"""A regression MLP trained with AdamW and a warm-up schedule.

adam_mlp.py is the plain PyTorch script, adam_mlp_sia.py the same as a sia job
(diff them: a few lines).  The targets come from a fixed random teacher network
plus noise, so the loss falls towards the noise level.
"""

import argparse

import sia.torch
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import TensorDataset


def synthetic_regression(size, features=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = torch.randn(size, features, generator=g)
    teacher = torch.randn(features, 8, generator=g)
    targets = torch.tanh(inputs @ teacher).sum(1, keepdim=True)
    targets += 0.1 * torch.randn(size, 1, generator=g)
    return TensorDataset(inputs, targets, torch.arange(size))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--steps", type=int, default=None, help="stop after N steps")
    p.add_argument("--dataset-size", type=int, default=8192)
    p.add_argument("--record", help="append the ids of the samples seen here")
    args = p.parse_args()
    torch.manual_seed(0)
    dataset = synthetic_regression(args.dataset_size)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(),
                          nn.Linear(128, 1)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / 50))
    model = sia.torch.wrap(model, optimizer, scheduler)
    loader = sia.torch.ElasticDataLoader(dataset, batch_size=32, shuffle=True)
    record = open(args.record, "a", buffering=1) if args.record else None
    for epoch in sia.torch.remaining_epochs_until(args.epochs, args.steps):
        for inputs, targets, ids in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(inputs.to(device)), targets.to(device))
            loss.backward()
            if record:
                record.write("".join(f"{i}\n" for i in ids.tolist()))
            optimizer.step()
            scheduler.step()
            sia.torch.record_loss(loss)


if __name__ == "__main__":
    main()
