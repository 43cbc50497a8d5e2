#!/bin/sh
# The stages piped together as a person would run a round by hand, twice: the second round
# feeds the first round's allocation and placement back (--previous), and jobs whose
# configuration did not change must keep their GPUs (no restart).
#   pipeline.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
cd "$SRC" || fail "no $SRC"
cluster=data/clusters/sia-hetero-64.toml
{ "$BIN/sia-estimate" --cluster $cluster data/examples/jobs.json data/examples/job.toml |
  "$BIN/sia-solve" | tee "$tmp/alloc1.json" |
  "$BIN/sia-place" --cluster $cluster >"$tmp/place1.json"; } || fail "round one's pipeline"
json_check "round one's placement" "$tmp/place1.json" 'd["kind"] == "Placement"'
# Every allocated job is placed.
n_alloc=$(json_eval "$tmp/alloc1.json" 'sum(isinstance(c, dict) for c in values(d, "config"))')
n_place=$(json_eval "$tmp/place1.json" 'len(values(d, "restart"))')
[ "$n_alloc" -gt 0 ] && [ "$n_alloc" -eq "$n_place" ] || fail "allocated $n_alloc, placed $n_place"
# Round two from the same matrix: same allocation, so nobody restarts.
{ "$BIN/sia-estimate" --cluster $cluster data/examples/jobs.json data/examples/job.toml |
  "$BIN/sia-solve" --previous "$tmp/alloc1.json" |
  "$BIN/sia-place" --cluster $cluster --previous "$tmp/place1.json" >"$tmp/place2.json"; } ||
  fail "round two's pipeline"
json_check "no job restarts when its configuration did not change" "$tmp/place2.json" \
  'd["kind"] == "Placement" and not has(d, restart=True)'
# Replaying a saved stage gives the same bytes.
"$BIN/sia-place" --cluster $cluster "$tmp/alloc1.json" | cmp - "$tmp/place1.json" ||
  fail "replaying the allocation gave another placement"
echo ok
