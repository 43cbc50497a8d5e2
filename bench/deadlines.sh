#!/bin/sh
# Deadlines (issue 34): sia, edf and elasticflow on the Philly and Saturn workloads (each
# folder's workloads pooled) with --deadlines SHARE (default 0.3): a table per workload
# set -- the policies' JCT, GPU hours and policy runtime per round (median, p95), then
# the deadline figures: admitted fraction of the guaranteed jobs, the admitted ones that
# met their deadlines, best-effort average JCT and mean rho, GPU hours.
#   bench/deadlines.sh BIN_DIR [SHARE[:SEED]] [more sia-ctl simulate flags]
# SIA_BENCH_SMOKE=1: tests/data/workload-tiny.csv only, without fairness. Figures in
# bench/README.md.
set -u
[ $# -ge 1 ] || { echo "usage: bench/deadlines.sh BIN_DIR [SHARE[:SEED]] [FLAGS...]" >&2; exit 64; }
BIN=$(cd "$1" && pwd) || exit 66
shift
SHARE=0.3
if [ $# -ge 1 ]; then
  SHARE=$1
  shift
fi
SRC=$(cd "$(dirname "$0")/.." && pwd) || exit 66
export NO_COLOR=1
if [ "${SIA_BENCH_SMOKE:-0}" = 1 ]; then
  sets="$SRC/tests/data/workload-tiny.csv"
  set -- "$@" --no-fairness
else
  sets="$SRC/data/workloads/philly $SRC/data/workloads/saturn"
fi
status=0
for w in $sets; do
  echo "== $(basename "$w") --deadlines $SHARE"
  "$BIN/sia-ctl" simulate --workload "$w" --policy sia,edf,elasticflow --deadlines "$SHARE" \
    "$@" || status=1
  echo
done
exit $status
