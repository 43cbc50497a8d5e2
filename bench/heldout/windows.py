#!/usr/bin/env python3
"""Held-out workloads from the Philly trace, made the way the Sia artifact made its own.

The artifact's generator (Sia, SOSP '23; its workload generator as the repository's
README describes it): trace rows with duration >= 60 s and under 1,000 GPU hours; an
8-hour window starting START hours after the trace's first submission; 160 rows sampled
with a seeded generator; the model from the GPU time (under 1 GPU hour cifar10, under 10
deepspeech2 or, half of them, bert, under 100 yolov3, else imagenet). The hand-tuned
num_replicas and batch_size columns come from the shipped workloads of the same model,
drawn at random (the artifact's parameters for them are not published).

    bench/heldout/windows.py --trace philly.csv --out DIR [--start H ...] [--seed N]

Writes DIR/window-H.csv for each start hour (default: six 8-hour windows spread over the
trace, none of them a shipped workload's). Needs only the Python standard library.
"""

import argparse
import bisect
import csv
import datetime
import glob
import os
import random
import sys

DEFAULT_STARTS = [602, 842, 962, 1082, 1202, 1682]


def read_trace(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                duration, gpu_time = float(r["duration"]), float(r["gpu_time"])
                t = datetime.datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S").timestamp()
            except (KeyError, ValueError) as e:
                sys.exit(f"{path}: row {len(rows) + 2}: expected timestamp, duration, gpu_time ({e})")
            if duration >= 60 and gpu_time < 1000 * 3600:
                rows.append((t, gpu_time))
    if not rows:
        sys.exit(f"{path}: no usable rows")
    rows.sort()
    return rows


def shipped_configs(workloads):
    configs = {}
    for path in sorted(glob.glob(os.path.join(workloads, "*.csv"))):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                configs.setdefault(r["application"], []).append(
                    (int(r["num_replicas"]), int(r["batch_size"])))
    return configs


def model_of(gpu_hours, coin):
    if gpu_hours < 1:
        return "cifar10"
    if gpu_hours < 10:
        return "bert" if coin.random() < 0.5 else "deepspeech2"
    if gpu_hours < 100:
        return "yolov3"
    return "imagenet"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", required=True, help="the Philly trace (philly.csv)")
    ap.add_argument("--out", required=True, help="directory for window-H.csv")
    ap.add_argument("--start", type=int, nargs="*", default=DEFAULT_STARTS,
                    help="window starts, hours after the first submission")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--jobs", type=int, default=160)
    ap.add_argument("--configs", default=os.path.join(here, "../../data/workloads/philly"),
                    help="shipped workloads to draw num_replicas and batch_size from")
    a = ap.parse_args()
    rows = read_trace(a.trace)
    times = [t for t, _ in rows]
    configs = shipped_configs(a.configs)
    os.makedirs(a.out, exist_ok=True)
    for start in a.start:
        t0 = rows[0][0] + start * 3600
        window = rows[bisect.bisect_left(times, t0):bisect.bisect_left(times, t0 + 8 * 3600)]
        if len(window) < a.jobs:
            sys.exit(f"window at {start} h: {len(window)} submissions, fewer than {a.jobs}")
        rng, coin, pick = (random.Random(a.seed + k) for k in range(3))
        jobs = sorted((t - t0, model_of(g / 3600, coin)) for t, g in rng.sample(window, a.jobs))
        path = os.path.join(a.out, f"window-{start}.csv")
        with open(path, "w") as f:
            f.write("name,time,application,num_replicas,batch_size\n")
            for i, (t, model) in enumerate(jobs):
                replicas, batch = pick.choice(configs[model])
                f.write(f"{model}-{i},{int(t)},{model},{replicas},{batch}\n")
        print(f"{path}: {a.jobs} of {len(window)} submissions")


if __name__ == "__main__":
    main()
