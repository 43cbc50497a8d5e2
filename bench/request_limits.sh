#!/bin/sh
# What one oversized submission costs the controller (issue 31): `sia-ctl serve` over
# ipc:// with JOBS queued jobs, then one submission of a job whose command line is BIG_MB
# MB, sent by a client whose own limits are raised to the transport's 64 MiB (so that the
# controller, not the client, has to refuse it). Prints the controller's resident memory
# (VmRSS, VmHWM), the median and largest round time of ROUNDS rounds before and after,
# what the submission answered (status, lines) and how much the state directory grew.
# Two `sia-run agent`s (4 GPUs each) run the jobs that fit (`sleep 600`); the agents'
# logs are searched for a lost controller.
#   bench/request_limits.sh BIN_DIR [JOBS] [BIG_MB] [ROUNDS]
# Defaults: 200 jobs, 51 MB, 8 rounds of 0.5 s. Figures in bench/README.md.
set -u
BIN="$(cd "$1" && pwd)"
JOBS=${2:-200}
BIG_MB=${3:-51}
ROUNDS=${4:-8}
tmp=$(mktemp -d)
ctl_pid=
agent_pids=
cleanup() {
  for p in $agent_pids; do kill "$p" 2>/dev/null; done
  for p in $agent_pids; do wait "$p" 2>/dev/null; done
  [ -n "$ctl_pid" ] && kill -9 "$ctl_pid" 2>/dev/null
  wait 2>/dev/null
  # SIA_BENCH_KEEP=DIR keeps the logs for a look.
  [ -n "${SIA_BENCH_KEEP:-}" ] && mkdir -p "$SIA_BENCH_KEEP" && cp ./*.log "$SIA_BENCH_KEEP/"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
export NO_COLOR=1
unset SIA_CLUSTER SIA_STATE_DIR SIA_CONFIG SIA_CTL_STATE_DIR SIA_CLIENT_CONNECT
export XDG_CONFIG_HOME=$tmp/xdg
cd "$tmp" || exit 1
fail() {
  echo "FAIL: $*"
  tail -5 ctl.log
  exit 1
}
EP="ipc://$tmp/run/ctl"
cat >cluster.toml <<'TOML'
name = "bench"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 2
TOML
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
bind = "$EP"
round = 0.5
time_limit = 1
TOML
# The client's own file: the same endpoint, its limits raised when this sia-ctl has them.
{
  echo "[client]"
  echo "connect = \"$EP\""
  if "$BIN/sia-ctl" --config config.toml config 2>/dev/null | grep -q max_request_bytes; then
    echo "[controller]"
    echo "max_request_bytes = 67108864"
    echo "max_job_bytes = 67108864"
    echo "max_command_bytes = 67108864"
  fi
} >client.toml
python3 - "$JOBS" "$BIG_MB" <<'PY'
import json, sys
jobs, big_mb = int(sys.argv[1]), int(sys.argv[2])
def doc(specs):
    return {"apiVersion": "sia/v1", "kind": "Jobs", "metadata": {}, "data": {"jobs": specs}}
specs = [{"name": f"j{i:03d}", "model": "cifar10", "max_gpus": 4,
          "command": ["/bin/sleep", "600"]} for i in range(jobs)]
json.dump(doc(specs), open("jobs.json", "w"))
big = {"name": "big", "model": "cifar10",
       "command": ["/bin/echo", "x" * (big_mb * 1000 * 1000)]}
json.dump(doc([big]), open("big.json", "w"))
PY

"$BIN/sia-ctl" --config config.toml serve >ctl.log 2>&1 &
ctl_pid=$!
i=0
until grep -q "serving" ctl.log; do
  i=$((i + 1))
  [ $i -gt 300 ] && fail "serve did not start"
  kill -0 "$ctl_pid" 2>/dev/null || fail "serve exited"
  sleep 0.1
done
for n in t4-0 t4-1; do
  "$BIN/sia-run" --state-dir "nodes/$n" agent --connect "$EP" --node "$n" \
    --cluster cluster.toml --grace 5 >"agent-$n.log" 2>&1 &
  agent_pids="$agent_pids $!"
done
client() { "$BIN/sia-ctl" --config client.toml "$@"; }
client submit jobs.json >/dev/null 2>err || fail "submitting $JOBS jobs: $(cat err)"

rounds() { grep -c "^.*round [0-9]*:" ctl.log; }
wait_rounds() {  # wait_rounds N: until N more rounds were logged
  want=$(($(rounds) + $1))
  i=0
  until [ "$(rounds)" -ge "$want" ]; do
    i=$((i + 1))
    [ $i -gt 1200 ] && fail "no round for 120 s"
    sleep 0.1
  done
}
# Round times (seconds) of the last N rounds: median and largest.
round_times() {
  grep "round [0-9]*:" ctl.log | tail -n "$1" | sed 's/.*(\([0-9.]*\) s, delivery.*/\1/' |
    sort -g | awk '{a[NR]=$1} END {printf "median %.3f s, max %.3f s", a[int((NR+1)/2)], a[NR]}'
}
mem() { awk '/VmRSS|VmHWM/ {printf "%s %d MB  ", $1, $2/1024}' "/proc/$ctl_pid/status"; }
state_kb() { du -sk state | cut -f1; }

wait_rounds "$ROUNDS"
echo "before: $JOBS queued jobs; controller $(mem); rounds $(round_times "$ROUNDS");" \
  "state $(($(state_kb) / 1024)) MB"
s0=$(state_kb)
t0=$(date +%s.%N)
echo "$(date +%T.%N) submitting" >>ctl.log
client submit big.json >out 2>err
status=$?
t1=$(date +%s.%N)
echo "$(date +%T.%N) answered" >>ctl.log
echo "oversized submission ($BIG_MB MB command line): status $status in" \
  "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, $(wc -l <err) line(s) on stderr:"
head -c 300 err
echo
wait_rounds "$ROUNDS"
echo "after:  controller $(mem); rounds $(round_times "$ROUNDS");" \
  "state grew $((($(state_kb) - s0) / 1024)) MB over $ROUNDS rounds"
client status -o json 2>/dev/null | grep -q '"big"' && echo "the oversized job was queued"
echo "agents: $(cat agent-*.log | grep -c 'no word from the controller\|no answer to READY') losses of the controller"
for p in $agent_pids; do kill "$p" 2>/dev/null; done
for p in $agent_pids; do wait "$p" 2>/dev/null; done
agent_pids=
kill "$ctl_pid" 2>/dev/null
wait "$ctl_pid" 2>/dev/null
ctl_pid=
