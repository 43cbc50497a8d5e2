#!/usr/bin/env python3
"""The admitted guaranteed jobs that missed their deadlines in a simulation, and why.

    sia-ctl simulate ... --deadlines 0.3 --jobs JOBS.jsonl --events EVENTS.jsonl
    bench/deadline_misses.py JOBS.jsonl [EVENTS.jsonl]

Reads the simulator's per-job records (--jobs) and, when given, its per-round records
(--events; sia-formats(5)). Per policy: how many guaranteed jobs were admitted and met
their deadlines, then a line per admitted job that missed: how late (seconds, and as a
share of its window from submission to deadline), its admission plan (GPU type x count,
planned finish), its restarts, and from the rounds: seconds before it first ran, seconds
it ran below its plan's GPU count or on another type, and the cause read off them:
  late start      it first ran more than a tenth of its window after submission
  held below plan it ran below its plan's GPUs (or off its type) for over a tenth of its run
  restarts        over 2 restarts (each a checkpoint-restore of the job's penalty)
  estimate        none of the above: it ran as planned and still took longer (the model
                  the admission planned on was optimistic)
Exit status: 0, or 1 when an admitted job missed (a check), 66 when a file is missing.
"""

import json
import sys
from collections import defaultdict


def records(path):
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if line:
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as e:
                        sys.exit(f"{path}:{n}: not a JSON record: {e}")
    except OSError as e:
        print(f"{path}: {e.strerror}", file=sys.stderr)
        sys.exit(66)


def timelines(path):
    """(workload, policy, job) -> [(t, type, gpus)] over the rounds it was active in."""
    out = defaultdict(list)
    for r in records(path):
        if r.get("type") != "round":
            continue
        for j in r["jobs"]:
            name, gtype, placement = j[0], j[1], j[2]
            out[(r["workload"], r["policy"], name)].append(
                (r["t"], gtype, sum(placement or [])))
    return out


def shape(job, line):
    """Seconds before it first ran, and seconds it ran short of its plan."""
    plan = job.get("plan") or {}
    first, short = None, 0.0
    for k, (t, gtype, gpus) in enumerate(line):
        end = line[k + 1][0] if k + 1 < len(line) else job["completion"]
        if gpus > 0 and first is None:
            first = t
        if first is not None and (gpus < plan.get("gpus", 0) or gtype != plan.get("gpu_type")):
            short += max(0.0, end - t)
    start = (first if first is not None else job["completion"]) - job["submission"]
    return start, short


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 64
    jobs = [j for j in records(argv[1]) if j.get("type") == "job" and j.get("admitted")]
    lines = timelines(argv[2]) if len(argv) == 3 else {}
    by_policy = defaultdict(list)
    for j in jobs:
        by_policy[j["policy"]].append(j)
    missed_any = False
    for policy, js in by_policy.items():
        missed = [j for j in js if not j["deadline_met"]]
        print(f"{policy}: {len(js)} admitted, {len(js) - len(missed)} met, {len(missed)} missed")
        causes = defaultdict(int)
        for j in missed:
            missed_any = True
            window = j["deadline"] - j["submission"]
            late = j["completion"] - j["deadline"]
            plan = j.get("plan") or {}
            text = (f"  {j['workload']} {j['name']} ({j['model']}): late {late:.0f} s "
                    f"({100 * late / window:.1f}% of {window:.0f} s); "
                    f"plan {plan.get('gpu_type', '?')} x {plan.get('gpus', '?')}")
            if "finish" in plan:
                text += f" by {plan['finish'] - j['submission']:.0f} s"
            text += f"; {j['restarts']} restarts"
            cause = "restarts" if j["restarts"] > 2 else "estimate"
            line = lines.get((j["workload"], j["policy"], j["name"]))
            if line:
                start, short = shape(j, line)
                run = max(1.0, j["completion"] - j["submission"] - start)
                text += f"; first ran after {start:.0f} s, {short:.0f} s short of its plan"
                if start > 0.1 * window:
                    cause = "late start"
                elif short > 0.1 * run:
                    cause = "held below plan"
            causes[cause] += 1
            print(f"{text}: {cause}")
        if causes:
            print("  causes: " + ", ".join(f"{c} {n}" for c, n in sorted(causes.items())))
    return 1 if missed_any else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
