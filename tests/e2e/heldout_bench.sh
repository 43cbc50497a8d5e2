#!/bin/sh
# bench/heldout cannot rot: windows.py makes a workload from a small synthetic trace (its
# columns as in the Philly trace), and run.sh simulates it in both profiles and prints the
# comparison table.
#   heldout_bench.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
logs "$tmp/log" "$tmp/err" "$tmp/out"
command -v python3 >/dev/null || skip "python3 missing"
# 40 submissions over 8 hours, GPU times across the models' classes (cifar10 to yolov3).
python3 - "$tmp/trace.csv" <<'PY'
import datetime, sys
with open(sys.argv[1], "w") as f:
    f.write("timestamp,duration,gpu_time\n")
    t0 = datetime.datetime(2017, 10, 3, 0, 0, 0)
    for i in range(40):
        t = t0 + datetime.timedelta(seconds=700 * i)
        gpu_time = [600, 1800, 7200, 30000, 90000][i % 5]
        f.write(f"{t:%Y-%m-%d %H:%M:%S},{gpu_time // 2},{gpu_time}\n")
PY
python3 "$SRC/bench/heldout/windows.py" --trace "$tmp/trace.csv" --out "$tmp/w" --start 0 \
  --jobs 12 >"$tmp/log" 2>&1 || fail "windows.py"
grep -q 'window-0.csv: 12 of 40 submissions' "$tmp/log" || fail "windows.py's summary"
[ "$(head -1 "$tmp/w/window-0.csv")" = "name,time,application,num_replicas,batch_size" ] ||
  fail "window-0.csv's header: $(head -1 "$tmp/w/window-0.csv")"
[ "$(wc -l <"$tmp/w/window-0.csv")" -eq 13 ] || fail "window-0.csv has not 12 rows"
sh "$SRC/bench/heldout/run.sh" --bin "$BIN" "$tmp/w/window-0.csv" >"$tmp/out" 2>"$tmp/err" ||
  fail "run.sh"
grep -q '^window-0 ' "$tmp/out" || fail "no window-0 row"
grep -q '^pooled ' "$tmp/out" || fail "no pooled row"
grep -q "^worst rho as JCT / mean isolated JCT (the reference's definition): [0-9.]* / [0-9.]*$" \
  "$tmp/out" || fail "no worst rho line"
# Bad input: one clear line naming the file, the row and the columns expected.
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
python3 "$SRC/bench/heldout/windows.py" --trace "$tmp/bad.csv" --out "$tmp/x" 2>"$tmp/err" &&
  fail "windows.py accepted a trace without its columns"
grep -q "bad.csv: row 2: expected timestamp, duration, gpu_time" "$tmp/err" ||
  fail "the bad trace's message"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "the bad trace's message is not one line"
echo ok
