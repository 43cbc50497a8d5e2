#!/bin/sh
# Sia's default profile against the published simulator's behaviour (--compat reference)
# on held-out workloads (windows.py), with finish-time fairness:
#
#   bench/heldout/run.sh [--bin DIR] WORKLOAD.csv... [-- FLAGS for the default run]
#
# Prints one row per workload and the pooled row (every job of every workload): average
# and p99 JCT (s), GPU hours per job, unfair fraction and worst rho, default / reference;
# then the pooled worst rho of both by one definition (the reference's).
set -eu
bin=$(dirname "$0")/../../build/bin
if [ "${1:-}" = --bin ]; then bin=$2; shift 2; fi
files=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do files="$files $1"; shift; done
[ "${1:-}" = -- ] && shift
[ -n "$files" ] || { echo "usage: run.sh [--bin DIR] WORKLOAD.csv... [-- FLAGS]" >&2; exit 64; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in $files; do
  b=$(basename "$w" .csv)
  "$bin/sia-ctl" simulate --policy sia --workload "$w" --no-timing -o json \
    --jobs "$tmp/$b.default.jsonl" "$@" > "$tmp/$b.default.json"
  "$bin/sia-ctl" simulate --policy sia --workload "$w" --no-timing -o json --compat reference \
    --jobs "$tmp/$b.reference.jsonl" > "$tmp/$b.reference.json"
done
python3 - "$tmp" $files <<'PY'
import json, math, os, sys
tmp, files = sys.argv[1], sys.argv[2:]
def summary(b, p):
    with open(os.path.join(tmp, f"{b}.{p}.json")) as f:
        return json.load(f)["data"]["summary"]
def jobs(b, p):
    with open(os.path.join(tmp, f"{b}.{p}.jsonl")) as f:
        return [json.loads(l) for l in f if l.strip()]
def p99(xs):
    xs = sorted(xs)
    return xs[max(0, math.ceil(0.99 * len(xs)) - 1)]
print("%-16s %17s %19s %13s %11s %11s" % ("workload", "avg JCT", "p99 JCT", "GPU h/job",
                                            "unfair", "worst rho"))
pooled = {"default": [], "reference": []}
def row(name, d, r):
    print("%-16s %7.0f / %7.0f %8.0f / %8.0f %5.2f / %5.2f %4.2f / %4.2f %4.2f / %4.2f  avg %+.1f%%"
          % (name, d[0], r[0], d[1], r[1], d[2], r[2], d[3], r[3], d[4], r[4],
             100 * (d[0] / r[0] - 1)))
for w in files:
    b = os.path.basename(w)[:-4]
    s = {p: summary(b, p) for p in pooled}
    for p in pooled:
        pooled[p].append((s[p], jobs(b, p)))
    f = lambda x: (x["avg_jct"], x["p99_jct"], x["gpu_hours_per_job"], x["unfair_fraction"],
                   x["worst_rho"])
    row(b, f(s["default"]), f(s["reference"]))
def pool(runs):
    n = sum(s["jobs"] for s, _ in runs)
    jcts = [j["jct"] for _, js in runs for j in js if j.get("jct") is not None]
    return (sum(s["avg_jct"] * s["jobs"] for s, _ in runs) / n, p99(jcts),
            sum(s["gpu_hours_per_job"] * s["jobs"] for s, _ in runs) / n,
            sum(s["unfair_fraction"] * s["jobs"] for s, _ in runs) / n,
            max(s["worst_rho"] for s, _ in runs))
row("pooled", pool(pooled["default"]), pool(pooled["reference"]))
# The profiles define rho differently (man sia-ctl, Compatibility profiles): the default
# averages each type's JCT / isolated JCT, the reference divides the JCT by the average
# isolated JCT (never larger). The same yardstick for both: the reference's.
def worst_ratio(runs):
    return max((j["jct"] / j["isolated_jct"] for _, js in runs for j in js
                if j.get("jct") is not None and j.get("isolated_jct")), default=0)
print("worst rho as JCT / mean isolated JCT (the reference's definition): %.2f / %.2f"
      % (worst_ratio(pooled["default"]), worst_ratio(pooled["reference"])))
PY
