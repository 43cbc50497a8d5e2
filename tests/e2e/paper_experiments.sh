#!/bin/sh
# bench/paper/run.sh cannot rot: its quick mode of the Figure 11 and Figure 9 experiments
# runs end to end on the bundled data and writes the raw results, a table with the paper's
# numbers and a Series document per curve.
#   paper_experiments.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
logs "$tmp/log" "$tmp/err"
command -v python3 >/dev/null || skip "python3 missing"
sh "$SRC/bench/paper/run.sh" --quick --bin "$BIN" --out "$tmp" fig11 fig9 2>"$tmp/log" ||
  fail "run.sh --quick fig11 fig9"
for f in fig11/rigid0 fig11/rigid1 fig11/strong1 fig9/gpus-64 fig9/gpus-128; do
  json_check "$f.json is a SimResult" "$tmp/$f.json" 'd["kind"] == "SimResult"'
done
grep -q '| 56% better |' "$tmp/fig11/table.md" || fail "fig11's table: $(cat "$tmp/fig11/table.md")"
grep -q '| 128 | Sia |' "$tmp/fig9/table.md" || fail "fig9's table: $(cat "$tmp/fig9/table.md")"
for f in fig11/series.json fig9/series.json; do
  json_check "$f is a Series of version 1" "$tmp/$f" 'd["kind"] == "Series" and d["version"] == 1'
  json_check "$f's points are pairs" "$tmp/$f" \
    'all(len(p) == 2 for s in d["series"] for p in s["points"])'
  grep -q "<svg" "${tmp}/${f%.json}.html" || fail "${f%.json}.html: no chart"
done
json_check "fig11 has two series" "$tmp/fig11/series.json" 'len(d["series"]) == 2'
json_check "fig9's x axis is logarithmic" "$tmp/fig9/series.json" 'd["x"]["scale"] == "log"'
# The scaled run really has twice the jobs' copies on twice the GPUs.
json_check "fig9's 128-GPU run is on the doubled cluster" "$tmp/fig9/gpus-128.json" \
  'd["data"]["cluster"] == "sia-hetero-64-x2"'
# Bad input: one clear line, usage status.
sh "$SRC/bench/paper/run.sh" --bin "$BIN" --out "$tmp" fig12 2>"$tmp/err" &&
  fail "run.sh accepted an unknown experiment"
grep -q 'unknown experiment "fig12"' "$tmp/err" || fail "the unknown experiment's message"
echo ok
