# Sourced by the e2e scripts that check a job's loss across its rounds, after
# lib/harness.sh (not a test itself: the e2e tests are tests/e2e/*.sh).
# loss_over START: reads reports of one round, in order (JSON Lines), and prints their mean
# loss per step: each report that carries a loss weighs the steps it covers, its step less
# the report's before (START: the step before the first report; "-": the first report only
# gives its step). Nothing is printed when no report covers a step. No single report is
# used alone, because on a busy machine one may cover a single step (a report sent at a
# batch change or a preemption): one step's loss is noise.
loss_over() {
  "$E2E_PY" -c '
import json, sys
prev = None if sys.argv[1] == "-" else float(sys.argv[1])
w = s = 0.0
for line in sys.stdin:
    r = json.loads(line) if line.strip() else {}
    if not isinstance(r.get("step"), (int, float)):
        continue
    loss = r.get("loss")
    if prev is not None and isinstance(loss, (int, float)) and r["step"] > prev:
        w += r["step"] - prev
        s += (r["step"] - prev) * loss
    prev = r["step"]
if w > 0:
    print("%.6g" % (s / w))
' "$1"
}
