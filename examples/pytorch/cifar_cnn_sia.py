"""A small CNN on synthetic CIFAR-shaped data, trained with SGD and momentum.

cifar_cnn.py is the plain PyTorch script, cifar_cnn_sia.py the same as a sia job
(diff them: a few lines).  The images are seeded noise; a fixed random teacher
network labels them, so the loss falls as the model learns.
"""

import argparse

import sia.torch
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import TensorDataset


def synthetic_cifar(size, seed=0):
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(size, 3, 32, 32, generator=g)
    teacher = torch.randn(3 * 8 * 8, 10, generator=g)
    labels = (F.avg_pool2d(images, 4).flatten(1) @ teacher).argmax(1)
    return TensorDataset(images, labels, torch.arange(size))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--steps", type=int, default=None, help="stop after N steps")
    p.add_argument("--dataset-size", type=int, default=4096)
    p.add_argument("--record", help="append the ids of the samples seen here")
    args = p.parse_args()
    torch.manual_seed(0)
    dataset = synthetic_cifar(args.dataset_size)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    model = sia.torch.wrap(model, optimizer)
    loader = sia.torch.ElasticDataLoader(dataset, batch_size=64, shuffle=True)
    record = open(args.record, "a", buffering=1) if args.record else None
    for epoch in sia.torch.remaining_epochs_until(args.epochs, args.steps):
        for images, labels, ids in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images.to(device)), labels.to(device))
            loss.backward()
            if record:
                record.write("".join(f"{i}\n" for i in ids.tolist()))
            optimizer.step()
            sia.torch.record_loss(loss)


if __name__ == "__main__":
    main()
