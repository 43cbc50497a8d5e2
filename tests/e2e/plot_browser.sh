#!/bin/sh
# sia-ctl plot, checked in a real browser: a short simulation of two policies gives its
# report twice -- `sia-ctl plot` on the files the run wrote, and `simulate --report` in
# one go -- and the two are the same bytes (--no-timing runs). Every chart's SVG is
# validated (plot_check.py: well-formed XML, the expected number of charts, each with a
# title, both axes, data marks, no NaN or infinity in a coordinate), then headless
# Chromium renders a timed run's page: the screenshot is not blank (pixels decoded with
# zlib, some in colour) and the DOM it built holds every chart. A Series document is drawn
# too, and bad input gets one error line naming the file and field.
# Exit 77 (skipped) without chromium or python3: scripts/test.sh installs them.
#   plot_browser.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
chromium=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed"
logs "$tmp/chromium.log"
check() { python3 "$SRC/tests/e2e/plot_check.py" "$@" || fail "plot_check.py $*"; }
cd "$SRC" || exit 1
ctl="$BIN/sia-ctl"
sim="simulate --workload tests/data/workload-tiny.csv --policy sia,themis"

# The files of a run, plotted, and the same run's --report: the same page.
$ctl $sim --no-timing -o json --jobs "$tmp/jobs.jsonl" --events "$tmp/rounds.jsonl" \
  --report "$tmp/direct.html" >"$tmp/result.json" || fail "simulate"
$ctl plot "$tmp/result.json" --jobs "$tmp/jobs.jsonl" --events "$tmp/rounds.jsonl" \
  -o "$tmp/plotted.html" || fail "plot"
cmp "$tmp/direct.html" "$tmp/plotted.html" || fail "plot and simulate --report differ"
$ctl plot "$tmp/result.json" --jobs "$tmp/jobs.jsonl" --events "$tmp/rounds.jsonl" \
  >"$tmp/stdout.html" || fail "plot to stdout"
cmp "$tmp/direct.html" "$tmp/stdout.html" || fail "plot to stdout differs"
# 3 job charts, GPUs held for each of the 2 policies, queue, contention, runtime; without
# timing the runtime chart says "no data".
check svg "$tmp/plotted.html" 8 --allow-empty 1

# A timed run: every chart has data.
$ctl $sim -q --report "$tmp/report.html" >/dev/null || fail "simulate --report"
check svg "$tmp/report.html" 8

# A Series document: one line chart.
cat >"$tmp/series.json" <<'JSON'
{"kind": "Series", "version": 1, "title": "Policy runtime",
 "x": {"label": "GPUs", "unit": "", "scale": "log"},
 "y": {"label": "policy runtime", "unit": "s", "scale": "log"},
 "series": [{"name": "sia", "points": [[64, 0.02], [128, 0.05], [512, 0.3]]},
            {"name": "gavel", "points": [[64, 0.5], [512, 40]]}]}
JSON
$ctl plot "$tmp/series.json" -o "$tmp/series.html" || fail "plot series"
check svg "$tmp/series.html" 1
grep -q 'class="mark dot"' "$tmp/series.html" || fail "series without markers"

# Bad input: one line naming the file and the field (65), a missing file (66).
head -c 200 "$tmp/jobs.jsonl" >"$tmp/torn.jsonl"
$ctl plot --jobs "$tmp/torn.jsonl" -o "$tmp/x.html" 2>"$tmp/err"
[ $? -eq 65 ] && grep -q "torn.jsonl: line 1: expected a JSON object" "$tmp/err" ||
  fail "a torn line: $(cat "$tmp/err")"
$ctl plot --jobs "$tmp/rounds.jsonl" 2>"$tmp/err" >/dev/null
[ $? -eq 65 ] && grep -q 'no "job" records' "$tmp/err" || fail "rounds as jobs: $(cat "$tmp/err")"
sed 's/"version": 1/"version": 2/' "$tmp/series.json" >"$tmp/series2.json"
$ctl plot "$tmp/series2.json" 2>"$tmp/err" >/dev/null
[ $? -eq 65 ] && grep -q "series2.json: version: expected 1" "$tmp/err" ||
  fail "series version: $(cat "$tmp/err")"
$ctl plot "$tmp/missing.json" 2>"$tmp/err" >/dev/null
[ $? -eq 66 ] || fail "a missing file: $(cat "$tmp/err")"
[ ! -e "$tmp/x.html" ] || fail "an error left a report behind"

# The browser.
run_chromium() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile" --hide-scrollbars "$@" 2>>"$tmp/chromium.log"
}
run_chromium --window-size=1300,2400 --screenshot="$tmp/report.png" "file://$tmp/report.html" \
  >/dev/null || fail "chromium --screenshot: $(tail -3 "$tmp/chromium.log")"
[ -s "$tmp/report.png" ] || fail "no screenshot: $(tail -3 "$tmp/chromium.log")"
check png "$tmp/report.png" 0.03
run_chromium --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" ||
  fail "chromium --dump-dom: $(tail -3 "$tmp/chromium.log")"
check dom "$tmp/dom.html" 8
[ -n "${SIA_PLOT_KEEP:-}" ] && cp "$tmp/report.png" "$tmp/report.html" "$SIA_PLOT_KEEP/"
echo ok
