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
# js FILE EXPR: EXPR (Python, over the document d) of a JSON file, printed.
js() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
sh "$SRC/bench/paper/run.sh" --quick --bin "$BIN" --out "$tmp" fig11 fig9 2>"$tmp/log" ||
  { cat "$tmp/log"; exit 1; }
for f in fig11/rigid0 fig11/rigid1 fig11/strong1 fig9/gpus-64 fig9/gpus-128; do
  [ "$(js "$tmp/$f.json" 'd["kind"]')" = SimResult ] || { echo "$f.json: not a SimResult"; exit 1; }
done
grep -q '| 56% better |' "$tmp/fig11/table.md"
grep -q '| 128 | Sia |' "$tmp/fig9/table.md"
for f in fig11/series.json fig9/series.json; do
  [ "$(js "$tmp/$f" 'd["kind"], d["version"]')" = "('Series', 1)" ]
  [ "$(js "$tmp/$f" 'all(len(p) == 2 for s in d["series"] for p in s["points"])')" = True ]
  grep -q "<svg" "${tmp}/${f%.json}.html" || { echo "${f%.json}.html: no chart"; exit 1; }
done
[ "$(js "$tmp/fig11/series.json" 'len(d["series"])')" = 2 ]
[ "$(js "$tmp/fig9/series.json" 'd["x"]["scale"]')" = log ]
# The scaled run really has twice the jobs' copies on twice the GPUs.
[ "$(js "$tmp/fig9/gpus-128.json" 'd["data"]["cluster"]')" = sia-hetero-64-x2 ]
# Bad input: one clear line, usage status.
if sh "$SRC/bench/paper/run.sh" --bin "$BIN" --out "$tmp" fig12 2>"$tmp/err"; then exit 1; fi
grep -q 'unknown experiment "fig12"' "$tmp/err"
