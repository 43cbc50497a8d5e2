#!/bin/sh
# The simulator end to end: the same workload twice gives the same bytes (determinism);
# --save-rounds writes each round's stage inputs and outputs, and piping a saved round's
# jobs (with the profile store as that round saw it) through sia-estimate | sia-solve |
# sia-place by hand gives back the saved round.
#   simulate_replay.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
cd "$SRC" || fail "no $SRC"
w=tests/data/workload-tiny.csv
for compat in default reference; do
  "$BIN/sia-ctl" simulate --compat $compat --workload $w --no-timing -o json --jobs "$tmp/a.jsonl" \
    --events "$tmp/a-events.jsonl" --save-rounds "$tmp/rounds-$compat" >"$tmp/a.json" ||
    fail "$compat: simulate"
  "$BIN/sia-ctl" simulate --compat $compat --workload $w --no-timing -o json --jobs "$tmp/b.jsonl" \
    --events "$tmp/b-events.jsonl" >"$tmp/b.json" || fail "$compat: simulate again"
  for f in .json .jsonl -events.jsonl; do
    cmp "$tmp/a$f" "$tmp/b$f" || fail "$compat: two runs differ in a$f"
  done
  [ "$(wc -l <"$tmp/a.jsonl")" -eq 5 ] || fail "$compat: not 5 jobs' results"
  json_check "$compat: round events" "$tmp/a-events.jsonl" 'has(docs, type="round")'
  # Replay round 5 (jobs running by then) by hand.
  d="$tmp/rounds-$compat"
  [ -f "$d/cluster.json" ] && [ -f "$d/r000005-jobs.json" ] || fail "$compat: rounds not saved"
  "$BIN/sia-estimate" --compat $compat --cluster "$d/cluster.json" \
    --profiles "$d/r000005-profiles.json" "$d/r000005-jobs.json" |
    "$BIN/sia-solve" --compat $compat >"$tmp/replayed-alloc.json" || fail "$compat: replay"
  "$BIN/sia-solve" --compat $compat "$d/r000005-goodput.json" >"$tmp/saved-alloc.json" ||
    fail "$compat: solve the saved matrix"
  cmp "$tmp/replayed-alloc.json" "$tmp/saved-alloc.json" ||
    fail "$compat: the replayed allocation differs from the saved round's"
  if [ $compat = default ]; then
    prev="$d/r000004-placement.json"
    "$BIN/sia-place" --previous "$prev" "$tmp/replayed-alloc.json" >"$tmp/replayed-place.json" ||
      fail "place the replayed allocation"
    "$BIN/sia-place" --previous "$prev" "$d/r000005-allocation.json" >"$tmp/saved-place.json" ||
      fail "place the saved allocation"
    cmp "$tmp/replayed-place.json" "$tmp/saved-place.json" ||
      fail "the replayed placement differs from the saved round's"
  fi
done
echo ok
