#!/bin/sh
# bench/paper/run.sh cannot rot: its quick mode of the Figure 11 and Figure 9 experiments
# runs end to end on the bundled data and writes the raw results, a table with the paper's
# numbers and a Series document per curve.
set -eu
BIN=$1
SRC=$2
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$SRC/bench/paper/run.sh" --quick --bin "$BIN" --out "$tmp" fig11 fig9 2>"$tmp/log" ||
  { cat "$tmp/log"; exit 1; }
for f in fig11/rigid0 fig11/rigid1 fig11/strong1 fig9/gpus-64 fig9/gpus-128; do
  [ "$(jq -r .kind "$tmp/$f.json")" = SimResult ] || { echo "$f.json: not a SimResult"; exit 1; }
done
grep -q '| 56% better |' "$tmp/fig11/table.md"
grep -q '| 128 | Sia |' "$tmp/fig9/table.md"
for f in fig11/series.json fig9/series.json; do
  [ "$(jq -r '.kind, .version' "$tmp/$f" | tr '\n' ' ')" = "Series 1 " ]
  [ "$(jq '[.series[].points[] | length == 2] | all' "$tmp/$f")" = true ]
done
[ "$(jq '.series | length' "$tmp/fig11/series.json")" = 2 ]
[ "$(jq -r .x.scale "$tmp/fig9/series.json")" = log ]
# The scaled run really has twice the jobs' copies on twice the GPUs.
[ "$(jq -r .data.cluster "$tmp/fig9/gpus-128.json")" = sia-hetero-64-x2 ]
# Bad input: one clear line, usage status.
if sh "$SRC/bench/paper/run.sh" --bin "$BIN" --out "$tmp" fig12 2>"$tmp/err"; then exit 1; fi
grep -q 'unknown experiment "fig12"' "$tmp/err"
