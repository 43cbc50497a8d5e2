#!/bin/sh
# Reservations (issue 34): sia on the Philly workloads (pooled) without reservations and
# with each reservations file given (default bench/reservations/a100-day.toml, both A100
# nodes held 08:00-20:00 UTC, and bench/reservations/a100-burst.toml, one A100 node taken
# back from 2 h to 5 h): average and p99 JCT, GPU hours lent and take-backs, a table per
# run (sia-ctl simulate's).
#   bench/reservations.sh BIN_DIR [RESERVATIONS.toml ...] [-- more sia-ctl simulate flags]
# SIA_BENCH_SMOKE=1: tests/data/workload-tiny.csv only, without fairness. Figures in
# bench/README.md.
set -u
[ $# -ge 1 ] || {
  echo "usage: bench/reservations.sh BIN_DIR [RESERVATIONS.toml ...] [-- FLAGS...]" >&2
  exit 64
}
BIN=$(cd "$1" && pwd) || exit 66
shift
SRC=$(cd "$(dirname "$0")/.." && pwd) || exit 66
files=
while [ $# -ge 1 ] && [ "$1" != -- ]; do
  files="$files $1"
  shift
done
[ $# -ge 1 ] && shift # the --
[ -n "$files" ] || files="$SRC/bench/reservations/a100-day.toml $SRC/bench/reservations/a100-burst.toml"
export NO_COLOR=1
w=$SRC/data/workloads/philly
if [ "${SIA_BENCH_SMOKE:-0}" = 1 ]; then
  w=$SRC/tests/data/workload-tiny.csv
  set -- "$@" --no-fairness
fi
status=0
echo "== $(basename "$w") without reservations"
"$BIN/sia-ctl" simulate --workload "$w" --policy sia "$@" || status=1
for f in $files; do
  echo
  echo "== $(basename "$w") --reservations $(basename "$f")"
  "$BIN/sia-ctl" simulate --workload "$w" --policy sia --reservations "$f" "$@" || status=1
done
exit $status
