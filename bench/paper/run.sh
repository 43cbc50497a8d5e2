#!/bin/sh
# The Sia paper's evaluation (Subramanya et al., SOSP '23, Tables 3-4, Figures 9-11, §5.7)
# as runnable experiments on the bundled data: each runs `sia-ctl simulate` and writes, in
# OUT/NAME/, the raw SimResult documents (one per run), table.md with the paper's numbers
# beside ours, and for curves series.json (a Series document, man/sia-formats.5) with
# series.html, its chart as `sia-ctl plot` draws it.
#
#   bench/paper/run.sh [--quick] [--bin DIR] [--out DIR] [--compat P] EXPERIMENT...
#     EXPERIMENT: table3 table4 fig9 fig10 fig11 profiling, or all
#     --quick     fewer points and one workload (the test's mode; minutes, not hours)
#     --bin DIR   where sia-ctl is (default: build/bin)
#     --out DIR   where the results go (default: bench/paper/results, or .../quick)
#     --compat P  the simulator's profile: reference (default), or default
#
# By default every run uses the published simulator's behaviour (--compat reference), so
# that our numbers compare with the paper's; runs where time is not the subject use
# --no-timing.
# Run experiments one at a time on a shared machine: each simulate uses every core.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=$src/build/bin
out=
quick=0
compat=reference
python=${PYTHON:-python3}
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --bin) bin=$2; shift ;;
    --out) out=$2; shift ;;
    --compat) compat=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: error: unknown option $1" >&2; exit 64 ;;
    *) break ;;
  esac
  shift
done
[ $# -gt 0 ] || { echo "run.sh: error: name an experiment (table3 table4 fig9 fig10 fig11 profiling all)" >&2; exit 64; }
if [ "$1" = all ]; then set -- table3 table4 fig9 fig10 fig11 profiling; fi
[ -x "$bin/sia-ctl" ] || { echo "run.sh: error: $bin/sia-ctl: not built (cmake --build build --target sia-ctl)" >&2; exit 66; }
if [ -z "$out" ]; then
  if [ $quick = 1 ]; then out=$here/results/quick; else out=$here/results; fi
fi
data=$src/data
hetero=$data/clusters/sia-hetero-64.toml
homog=$data/clusters/sia-homogeneous-64.toml
if [ $quick = 1 ]; then
  philly=$data/workloads/philly/workload-1.csv
  saturn=$data/workloads/saturn/workload-1.csv
else
  philly=$data/workloads/philly
  saturn=$data/workloads/saturn
fi

# sim EXP NAME FLAGS...: one simulation into OUT/EXP/NAME.json (written whole or not at all).
sim() {
  exp=$1 name=$2
  shift 2
  mkdir -p "$out/$exp"
  echo "run.sh: $exp/$name: sia-ctl simulate $*" >&2
  start=$(date +%s)
  "$bin/sia-ctl" -q -o json simulate --compat "$compat" "$@" > "$out/$exp/$name.json.tmp"
  mv "$out/$exp/$name.json.tmp" "$out/$exp/$name.json"
  echo "run.sh: $exp/$name: $(( $(date +%s) - start )) s" >&2
}

table3() {
  policies=sia,pollux,gavel
  [ $quick = 1 ] && policies=sia,gavel
  sim table3 philly --no-timing --no-fairness --cluster "$hetero" --workload "$philly" --policy $policies
  sim table3 helios --no-timing --no-fairness --cluster "$hetero" --workload "$saturn" --policy $policies
}

table4() {
  policies=sia,pollux,gavel,themis
  [ $quick = 1 ] && policies=sia,gavel
  sim table4 philly --no-timing --no-fairness --cluster "$homog" --workload "$philly" --policy $policies
}

fig9() {
  # Saturn workload 1 with every job repeated k times on k times the cluster (the
  # published simulator's scale_kx workloads), simulated through its 8-hour arrival window
  # (not to the last completion): the policy's runtime per round is the subject, not the
  # JCT. Pollux's genetic search is timed up to 128 GPUs (at 512 it takes about 5 s a
  # round here, 40 minutes for the window).
  scales="1 2 4 8 16 32" pollux_scales="1 2" horizon=28800
  [ $quick = 1 ] && scales="1 2" pollux_scales= horizon=1200
  for k in $scales; do
    sim fig9 "gpus-$((64 * k))" --no-fairness --cluster "$hetero" --scale "$k" \
      --workload "$data/workloads/saturn/workload-1.csv" --horizon $horizon --policy sia,gavel
  done
  for k in $pollux_scales; do
    sim fig9 "gpus-$((64 * k))-pollux" --no-fairness --cluster "$hetero" --scale "$k" \
      --workload "$data/workloads/saturn/workload-1.csv" --horizon $horizon --policy pollux
  done
  sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | sort -u > "$out/fig9/machine.txt"
  echo "$(nproc) CPUs visible, shared with other users' builds" >> "$out/fig9/machine.txt"
}

fig10() {
  powers="-1 -0.5 0.5 1" rounds="30 60 120 300" fair=
  [ $quick = 1 ] && powers="-0.5 0.5" rounds="60 300" fair=--no-fairness
  for p in $powers; do
    # lambda_n takes p's opposite sign (a job left out must cost more than any allocation).
    case $p in -*) ln=1.1 ;; *) ln=-1.1 ;; esac
    sim fig10 "p$p" --no-timing $fair --cluster "$hetero" --workload "$philly" --policy sia \
      --p="$p" --lambda-n="$ln"
    # The same on the homogeneous cluster, where jobs queue (on the heterogeneous one
    # almost none ever waits, so p can only reshape allocations, not decide who waits).
    [ $quick = 1 ] && continue
    sim fig10 "homogeneous-p$p" --no-timing --cluster "$homog" --workload "$philly" \
      --policy sia --p="$p" --lambda-n="$ln"
  done
  for r in $rounds; do
    sim fig10 "round$r" --no-timing --no-fairness --cluster "$hetero" --workload "$philly" \
      --policy sia --round "$r"
  done
}

fig11() {
  shares="0 0.25 0.5 0.75 1"
  [ $quick = 1 ] && shares="0 1"
  for s in $shares; do
    sim fig11 "rigid$s" --no-timing --no-fairness --cluster "$hetero" --workload "$philly" \
      --policy sia --rigid-share "$s"
    [ "$s" = 0 ] && continue  # 0% strong-scaling is the all-adaptive run above
    sim fig11 "strong$s" --no-timing --no-fairness --cluster "$hetero" --workload "$philly" \
      --policy sia --strong-scaling-share "$s"
  done
}

profiling() {
  for level in none bootstrap oracle; do
    sim profiling "$level" --no-timing --no-fairness --cluster "$hetero" --workload "$philly" \
      --policy sia --profiling $level
  done
}

for exp in "$@"; do
  case $exp in
    table3|table4|fig9|fig10|fig11|profiling) ;;
    *) echo "run.sh: error: unknown experiment \"$exp\" (table3 table4 fig9 fig10 fig11 profiling all)" >&2; exit 64 ;;
  esac
done
for exp in "$@"; do
  $exp
  mode=full
  [ $quick = 1 ] && mode=quick
  "$python" "$here/tables.py" "$exp" "$out/$exp" "$mode"
  echo "run.sh: wrote $out/$exp/table.md" >&2
  # Its plots: one page per curve, as sia-ctl plot draws a Series.
  for series in "$out/$exp"/series*.json; do
    [ -f "$series" ] || continue
    "$bin/sia-ctl" plot "$series" -o "${series%.json}.html"
    echo "run.sh: wrote ${series%.json}.html" >&2
  done
done
