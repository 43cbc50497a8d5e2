#!/usr/bin/env python3
"""Step time of a small CNN on 2 CPU ranks (gloo): sia.torch against plain
DistributedDataParallel.  A figure, printed; not a test.

    python3 bench/torch_ddp_step.py [--steps 60] [--rounds 3] [--batch 64]
                                    [--sia-python DIR]

Each round runs plain DDP (DistributedSampler, DataLoader) and then sia.torch
(ElasticDataLoader, sia.torch.wrap) for --steps optimizer steps at the same
global batch on the same synthetic 3x32x32 images, two processes each; rank 0
times every step (from one optimizer.step() to the next, data loading
included) and the first 10 are left out.  Printed: each run's median step time,
and the median over rounds of sia.torch / DDP.  --sia-python: another
checkout's python/ directory for the sia.torch runs (to compare versions).
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_PYTHON = os.path.join(os.path.dirname(HERE), "python")
WARMUP = 10


def model_and_data(torch, n):
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 10))
    x = torch.randn(n, 3, 32, 32)
    y = torch.randint(0, 10, (n,))
    return model, torch.utils.data.TensorDataset(x, y)


def worker(mode, steps, batch):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    model, dataset = model_and_data(torch, batch * (steps + 1))
    times, mark = [], None
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.utils.data.distributed import DistributedSampler

        dist.init_process_group("gloo")
        model = DDP(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        loader = torch.utils.data.DataLoader(
            dataset, batch // world, sampler=DistributedSampler(dataset))
    else:
        import sia.torch

        sia.torch.init()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        model = sia.torch.wrap(model, optimizer)
        loader = sia.torch.ElasticDataLoader(dataset, batch, shuffle=True)
    for x, y in loader if mode == "ddp" else (b[:2] for b in loader):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        now = time.perf_counter()
        if mark is not None:
            times.append(now - mark)
        mark = now
        if len(times) == steps:
            break
    if rank == 0:
        print(statistics.median(times[WARMUP:]))
    # Both runs leave their loop early: no rank exits while the other still waits on a
    # collective of the last step (gloo aborted rank 0 so on a loaded machine).
    dist.barrier()
    if mode == "ddp":
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(mode, args, python_dir):
    port = free_port()
    procs = []
    for rank in range(2):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIA_")}
        env.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   PYTHONPATH=python_dir, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="",
                   SIA_DEVICE="cpu", SIA_LOCAL_BSZ=str(args.batch // 2))
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--worker", mode, "--steps", str(args.steps),
             "--batch", str(args.batch)], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    if any(p.returncode for p in procs):
        for rank, (_, err) in enumerate(outs):
            sys.stderr.write(f"--- rank {rank}\n{err[-2000:]}")
        sys.exit(f"torch_ddp_step: the {mode} run failed: statuses "
                 f"{[p.returncode for p in procs]}")
    return float(outs[0][0].strip())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--sia-python", default=REPO_PYTHON)
    p.add_argument("--worker", choices=("ddp", "sia"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.steps <= WARMUP:
        print(f"torch_ddp_step: --steps must be above {WARMUP}", file=sys.stderr)
        sys.exit(64)
    if args.worker:
        return worker(args.worker, args.steps, args.batch)
    ratios = []
    print(f"small CNN, 2 CPU ranks (gloo), global batch {args.batch}, {args.steps} "
          f"steps (first {WARMUP} left out), median step time")
    for r in range(args.rounds):
        ddp = run("ddp", args, args.sia_python)
        sia = run("sia", args, args.sia_python)
        ratios.append(sia / ddp)
        print(f"round {r + 1}: DDP {ddp * 1e3:.2f} ms, sia.torch {sia * 1e3:.2f} ms, "
              f"sia.torch / DDP {sia / ddp:.3f}")
    print(f"median sia.torch / DDP over {args.rounds} round(s): "
          f"{statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
