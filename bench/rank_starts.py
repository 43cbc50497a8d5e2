#!/usr/bin/env python3
"""Rank starts of one job, for bench/slurm_latency.sh (not a test).

  rank_starts.py count JOB STATE GLOB      prints {"shape": the job's placement in the
                                           newest STATE/rounds/r*-placement.json, "starts":
                                           {"R/W": N}}: how many times each rank R of a world
                                           of W wrote its start line in the logs (GLOB) (the
                                           "==== sia-run: ... job JOB round G rank R/W ..."
                                           header sia writes to a rank's log just before
                                           the rank's program runs, under Slurm and sia-run)
  rank_starts.py wait JOB STATE GLOB BEFORE TIMEOUT
                                           the job's placement in the newest
                                           STATE/rounds/r*-placement.json; when it differs
                                           from the one before (BEFORE's "shape"), polls the
                                           logs (GLOB) every 10 ms until every rank of the
                                           new world started once more than in BEFORE, then
                                           prints {"shape", "changed", "latency"}: seconds
                                           from the placement file's writing (the round's
                                           decision) to the last rank's start line seen.
Times are the placement file's mtime and this machine's clock: both are wall time.
"""
import glob
import json
import os
import re
import sys
import time


def starts(job, paths):
    pat = re.compile(r"^==== sia-run: \S+ job " + re.escape(job) + r" round \d+ rank (\d+)/(\d+) ")
    seen = {}
    for p in paths:
        try:
            with open(p, errors="replace") as f:
                for line in f:
                    m = pat.match(line)
                    if m:
                        k = m.group(1) + "/" + m.group(2)
                        seen[k] = seen.get(k, 0) + 1
        except OSError:
            pass
    return seen


def shape(job, state):
    files = sorted(glob.glob(state + "/rounds/r*-placement.json"),
                   key=lambda p: int(re.search(r"/r(\d+)-placement", p).group(1)))
    if not files:
        return "", 0.0, 0
    doc = json.load(open(files[-1]))
    for j in doc["data"]["jobs"]:
        if j["name"] == job:
            nodes = [(n["name"], len(n["gpus"])) for n in j["nodes"]]
            text = j["gpu_type"] + " " + " ".join("%s:%d" % n for n in nodes)
            return text, os.stat(files[-1]).st_mtime, sum(g for _, g in nodes)
    return "", os.stat(files[-1]).st_mtime, 0


def main():
    if sys.argv[1] == "count":
        job, state, pattern = sys.argv[2:5]
        print(json.dumps({"shape": shape(job, state)[0], "starts": starts(job, glob.glob(pattern))}))
        return 0
    job, state, pattern, before_file, timeout = sys.argv[2:7]
    doc = json.load(open(before_file))
    before = doc["starts"]
    now_shape, decided, world = shape(job, state)
    out = {"shape": now_shape, "changed": now_shape != doc["shape"], "latency": None}
    if out["changed"] and world > 0:
        end = time.time() + float(timeout)
        while True:
            seen = starts(job, glob.glob(pattern))
            if all(seen.get("%d/%d" % (r, world), 0) > before.get("%d/%d" % (r, world), 0)
                   for r in range(world)):
                out["latency"] = round(time.time() - decided, 3)
                break
            if time.time() > end:
                print(json.dumps(out))
                sys.stderr.write("rank_starts: %s: not every rank of %d started within %s s\n"
                                 % (now_shape, world, timeout))
                return 1
            time.sleep(0.01)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
