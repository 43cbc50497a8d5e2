#!/bin/bash
# Simulation results to compare before and after a change that must not move them (the
# simulator, the policies, the estimator, the placer): every shipped workload in both
# profiles with and without fairness, every policy in both profiles, app searches
# (successive halving and hyperband), rigid and strong-scaling shares, the Saturn
# workloads pooled, --scale 2 and the other shipped clusters; each case's `-o json`,
# `--jobs` and `--events` with --no-timing, and its stderr and status.
#   bench/sim_identity.sh BIN_DIR OUT_DIR          (then, after the change, into another
#   diff -r OUT_BEFORE OUT_AFTER                    folder: no output means identical)
# SIA_BENCH_SMOKE=1 runs only the first two cases. About 1 minute of 2 cores in all.
set -u
[ $# -eq 2 ] || { echo "usage: bench/sim_identity.sh BIN_DIR OUT_DIR" >&2; exit 64; }
BIN=$(cd "$1" && pwd) || exit 66
[ -x "$BIN/sia-ctl" ] || { echo "bench/sim_identity.sh: $BIN/sia-ctl: not found" >&2; exit 66; }
OUT=$2
DATA=$(cd "$(dirname "$0")/../data" && pwd) || exit 66
mkdir -p "$OUT" || exit 73
W=$DATA/workloads
C=$DATA/clusters

cases() {
  local w b c p
  for w in "$W"/philly/*.csv "$W"/saturn/*.csv; do
    b=$(basename "$(dirname "$w")")-$(basename "$w" .csv)
    for c in default reference; do
      echo "$b-$c-fair --workload $w --compat $c"
      echo "$b-$c-nofair --workload $w --compat $c --no-fairness"
    done
  done
  for p in gavel pollux themis ftf-lp fifo srtf; do
    for c in default reference; do
      echo "pol-$p-$c --workload $W/philly/workload-2.csv --compat $c --policy $p" \
        "--horizon 14400 --pollux-generations 20 --pollux-population 20"
    done
  done
  echo "search-sh --workload $W/philly/workload-3.csv --searches 0.5"
  echo "search-hb --workload $W/philly/workload-4.csv --searches 0.5 --search-scheduler hyperband"
  echo "rigid --workload $W/philly/workload-5.csv --rigid-share 0.3 --strong-scaling-share 0.3"
  echo "saturn-all-fair --workload $W/saturn --horizon 172800"
  echo "scale2 --workload $W/philly/workload-6.csv --scale 2 --no-fairness"
  echo "homog --workload $W/philly/workload-7.csv --cluster $C/sia-homogeneous-64.toml"
  echo "phys --workload $W/philly/workload-8.csv --cluster $C/sia-physical-44.toml --compat reference"
}

n=0
failed=0
while read -r name args; do
  if [ "${SIA_BENCH_SMOKE:-0}" = 1 ] && [ $n -ge 2 ]; then break; fi
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$BIN/sia-ctl" simulate --no-timing -o json --jobs "$OUT/$name.jobs.jsonl" \
    --events "$OUT/$name.events.jsonl" $args >"$OUT/$name.json" 2>"$OUT/$name.err"
  rc=$?
  echo "rc=$rc" >>"$OUT/$name.err"
  [ $rc -eq 0 ] || { echo "case $name: status $rc (see $OUT/$name.err)" >&2; failed=$((failed + 1)); }
done < <(cases)
echo "$n case(s) in $OUT, $failed failed"
[ $failed -eq 0 ]
