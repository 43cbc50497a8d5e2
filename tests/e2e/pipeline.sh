#!/bin/sh
# The stages piped together as a person would run a round by hand, twice: the second round
# feeds the first round's allocation and placement back (--previous), and jobs whose
# configuration did not change must keep their GPUs (no restart).
set -eu
BIN=$1
SRC=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$SRC"
cluster=data/clusters/sia-hetero-64.toml
"$BIN/sia-estimate" --cluster $cluster data/examples/jobs.json data/examples/job.toml |
  "$BIN/sia-solve" | tee "$tmp/alloc1.json" |
  "$BIN/sia-place" --cluster $cluster >"$tmp/place1.json"
grep -q '"kind":"Placement"' "$tmp/place1.json"
# Every allocated job is placed.
n_alloc=$(grep -o '"config":{' "$tmp/alloc1.json" | wc -l)
n_place=$(grep -o '"restart":' "$tmp/place1.json" | wc -l)
[ "$n_alloc" -eq "$n_place" ] || { echo "allocated $n_alloc, placed $n_place"; exit 1; }
# Round two from the same matrix: same allocation, so nobody restarts.
"$BIN/sia-estimate" --cluster $cluster data/examples/jobs.json data/examples/job.toml |
  "$BIN/sia-solve" --previous "$tmp/alloc1.json" |
  "$BIN/sia-place" --cluster $cluster --previous "$tmp/place1.json" >"$tmp/place2.json"
if grep -q '"restart":true' "$tmp/place2.json"; then
  echo "a job restarted although its configuration did not change"
  cat "$tmp/place2.json"
  exit 1
fi
# Replaying a saved stage gives the same bytes.
"$BIN/sia-place" --cluster $cluster "$tmp/alloc1.json" | cmp - "$tmp/place1.json"
echo ok
