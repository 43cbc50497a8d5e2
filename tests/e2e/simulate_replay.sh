#!/bin/sh
# The simulator end to end: the same workload twice gives the same bytes (determinism);
# --save-rounds writes each round's stage inputs and outputs, and piping a saved round's
# jobs (with the profile store as that round saw it) through sia-estimate | sia-solve |
# sia-place by hand gives back the saved round.
set -eu
BIN=$1
SRC=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$SRC"
w=tests/data/workload-tiny.csv
for compat in default reference; do
  "$BIN/sia-ctl" simulate --compat $compat --workload $w --no-timing -o json --jobs "$tmp/a.jsonl" \
    --events "$tmp/a-events.jsonl" --save-rounds "$tmp/rounds-$compat" >"$tmp/a.json"
  "$BIN/sia-ctl" simulate --compat $compat --workload $w --no-timing -o json --jobs "$tmp/b.jsonl" \
    --events "$tmp/b-events.jsonl" >"$tmp/b.json"
  cmp "$tmp/a.json" "$tmp/b.json"
  cmp "$tmp/a.jsonl" "$tmp/b.jsonl"
  cmp "$tmp/a-events.jsonl" "$tmp/b-events.jsonl"
  [ "$(wc -l <"$tmp/a.jsonl")" -eq 5 ]
  grep -q '"type":"round"' "$tmp/a-events.jsonl"
  # Replay round 5 (jobs running by then) by hand.
  d="$tmp/rounds-$compat"
  [ -f "$d/cluster.json" ] && [ -f "$d/r000005-jobs.json" ]
  "$BIN/sia-estimate" --compat $compat --cluster "$d/cluster.json" \
    --profiles "$d/r000005-profiles.json" "$d/r000005-jobs.json" |
    "$BIN/sia-solve" --compat $compat >"$tmp/replayed-alloc.json"
  "$BIN/sia-solve" --compat $compat "$d/r000005-goodput.json" >"$tmp/saved-alloc.json"
  cmp "$tmp/replayed-alloc.json" "$tmp/saved-alloc.json"
  if [ $compat = default ]; then
    prev="$d/r000004-placement.json"
    "$BIN/sia-place" --previous "$prev" "$tmp/replayed-alloc.json" >"$tmp/replayed-place.json"
    "$BIN/sia-place" --previous "$prev" "$d/r000005-allocation.json" >"$tmp/saved-place.json"
    cmp "$tmp/replayed-place.json" "$tmp/saved-place.json"
  fi
done
echo ok
