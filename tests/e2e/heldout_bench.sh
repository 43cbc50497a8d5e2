#!/bin/sh
# bench/heldout cannot rot: windows.py makes a workload from a small synthetic trace (its
# columns as in the Philly trace), and run.sh simulates it in both profiles and prints the
# comparison table.
set -eu
BIN=$1
SRC=$2
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
  --jobs 12 >"$tmp/log"
grep -q 'window-0.csv: 12 of 40 submissions' "$tmp/log"
[ "$(head -1 "$tmp/w/window-0.csv")" = "name,time,application,num_replicas,batch_size" ]
[ "$(wc -l <"$tmp/w/window-0.csv")" -eq 13 ]
sh "$SRC/bench/heldout/run.sh" --bin "$BIN" "$tmp/w/window-0.csv" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; exit 1; }
grep -q '^window-0 ' "$tmp/out"
grep -q '^pooled ' "$tmp/out"
grep -q "^worst rho as JCT / mean isolated JCT (the reference's definition): [0-9.]* / [0-9.]*$" \
  "$tmp/out"
# Bad input: one clear line naming the file, the row and the columns expected.
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
if python3 "$SRC/bench/heldout/windows.py" --trace "$tmp/bad.csv" --out "$tmp/x" 2>"$tmp/err"; then
  exit 1
fi
grep -q "bad.csv: row 2: expected timestamp, duration, gpu_time" "$tmp/err"
[ "$(wc -l <"$tmp/err")" -eq 1 ]
