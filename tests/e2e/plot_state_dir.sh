#!/bin/sh
# sia-ctl plot on a live cluster: a few `sia-ctl round` runs on the bundled CPU cluster
# (data/clusters/cpu-example.toml, the default local node commands, jobs that only sleep)
# fill the state directory's kept rounds; `sia-ctl --state-dir DIR plot` draws the
# allocation timeline per GPU type and per job from them (two charts, well-formed SVG
# with data, checked by plot_check.py), and so does `plot` with the configured state
# directory. An empty state directory draws "no data"; a missing one is status 66.
#   plot_state_dir.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
ST=$tmp/state
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
stop_jobs() {
  for n in cpu-a100 cpu-rtx; do
    for j in one two; do  # one at a time: a stop naming an unknown job stops nothing
      [ -d "$ST/nodes/$n" ] && "$BIN/sia-run" --state-dir "$ST/nodes/$n" stop --grace 0 "$j"
    done
  done
}
at_exit stop_jobs
check() { python3 "$SRC/tests/e2e/plot_check.py" "$@" || fail "plot_check.py $*"; }
cat >config.toml <<TOML
[controller]
state_dir = "$ST"
cluster = "$SRC/data/clusters/cpu-example.toml"
time_limit = 1
TOML
for j in one two; do
  cat >$j.toml <<TOML
name = "$j"
model = "cifar10"
max_gpus = 2
command = ["sleep", "120"]
TOML
done

mkdir -p "$tmp/empty/rounds"
"$BIN/sia-ctl" --state-dir "$tmp/empty" plot -o empty.html || fail "plot of an empty state dir"
check svg empty.html 2 --allow-empty 2
"$BIN/sia-ctl" --state-dir "$tmp/missing" plot -o missing.html 2>err
[ $? -eq 66 ] && grep -q "no such state directory" err || fail "a missing state dir: $(cat err)"

ctl submit one.toml >/dev/null || fail "submit one"
ctl -q round >/dev/null || fail "round 1"
ctl submit two.toml >/dev/null || fail "submit two"
for i in 2 3 4; do ctl -q round >/dev/null || fail "round $i"; done
n=$(ls "$ST/rounds" | grep -c -- '-placement.json$')
[ "$n" -ge 3 ] || fail "only $n rounds kept"

"$BIN/sia-ctl" --state-dir "$ST" plot -o cluster.html || fail "plot --state-dir"
check svg cluster.html 2
for j in one two; do grep -q ">$j<" cluster.html || fail "job $j not in the legend"; done
grep -q ">a100<" cluster.html || fail "GPU type a100 not in the legend"
ctl plot >configured.html || fail "plot of the configured state dir"
cmp cluster.html configured.html || fail "--state-dir and the configured one differ"
echo ok
