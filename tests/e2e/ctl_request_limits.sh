#!/bin/sh
# One client cannot make the controller carry a huge job, and an agent trusts only its
# controller (issue 31), with the real programs: `sia-ctl serve` over ipc:// with two
# `sia-run agent`s (connecting after checking the socket's directories) and 20 jobs; a submission of a 2 MB command line from a client whose own limits are raised is
# refused by the controller unread (65, one line), one over max_command_bytes is refused
# by the client (65, one line), and the controller goes on (rounds, status, a small job
# taken; nothing of the big command in the state directory). `sia-run agent` refuses an
# abstract endpoint (78) and a socket directory others may write (77), one line each.
# Figures with 200 jobs and 51 MB: bench/request_limits.sh, bench/README.md.
#   ctl_request_limits.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
logs "$tmp/ctl.log" "$tmp/agent-*.log"
EP="ipc://$tmp/run/ctl"
cat >cluster.toml <<'TOML'
name = "limits"
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
[client]
connect = "$EP"
TOML
cat >raised.toml <<TOML
[controller]
cluster = "cluster.toml"
max_request_bytes = 67108864
max_job_bytes = 67108864
max_command_bytes = 67108864
[client]
connect = "$EP"
TOML
python3 - <<'PY'
import json
def doc(specs):
    return {"apiVersion": "sia/v1", "kind": "Jobs", "metadata": {}, "data": {"jobs": specs}}
def job(name, *args):
    return {"name": name, "model": "cifar10", "command": ["/bin/sleep", *args]}
json.dump(doc([job(f"j{i:02d}", "300") for i in range(20)]), open("jobs.json", "w"))
json.dump(doc([job("big", "x" * 2000000)]), open("big.json", "w"))
json.dump(doc([job("long", "y" * 70000)]), open("long.json", "w"))
json.dump(doc([job("small", "1")]), open("small.json", "w"))
PY
[ -f small.json ] || fail "cannot write the jobs"

"$BIN/sia-ctl" --config config.toml serve >ctl.log 2>&1 &
ctl_pid=$!
started "$ctl_pid"
serving() { grep -q "serving $EP" ctl.log; }
wait_for 60 "serve did not start: $(cat ctl.log)" serving
agent_pids=
for n in t4-0 t4-1; do
  "$BIN/sia-run" --state-dir "nodes/$n" agent --connect "$EP" --node "$n" \
    --cluster cluster.toml --grace 5 >"agent-$n.log" 2>&1 &
  agent_pids="$agent_pids $!"
  started $!
done
connected() { grep -q "connected to ipc://.* as $1" "agent-$1.log"; }
wait_for 60 "agent t4-0 did not connect" connected t4-0
wait_for 60 "agent t4-1 did not connect" connected t4-1
"$BIN/sia-ctl" --config config.toml submit jobs.json >/dev/null 2>err ||
  fail "submitting 20 jobs: $(cat err)"
rounds() { grep -c "round [0-9]*:" ctl.log; }
more_rounds() { [ "$(rounds)" -ge "$want" ]; }
want=$(($(rounds) + 2))
wait_for 60 "no rounds" more_rounds

# The controller refuses what its client would have sent.
"$BIN/sia-ctl" --config raised.toml submit big.json >out 2>err
st=$?
[ $st -eq 65 ] || { cat err; fail "a 2 MB submission: status $st, expected 65"; }
[ "$(wc -l <err)" -eq 1 ] || { cat err; fail "a 2 MB submission: not one line"; }
grep -q "sia-ctl: error: $EP did not take the request: .* sent a message of [0-9]* bytes, over the limit of 1048576 for a request (controller.max_request_bytes)" err ||
  { cat err; fail "the controller's refusal does not say why"; }
grep -q "refused: .*over the limit of 1048576" ctl.log || fail "the refusal is not logged"
# The client refuses a command line over its limit before sending anything.
"$BIN/sia-ctl" --config config.toml submit long.json >out 2>err
st=$?
[ $st -eq 65 ] || { cat err; fail "a 70 kB command line: status $st, expected 65"; }
[ "$(wc -l <err)" -eq 1 ] || { cat err; fail "a 70 kB command line: not one line"; }
grep -q "jobs\[0\]: command: 70010 bytes, over the limit of 65536 (controller.max_command_bytes)" err ||
  { cat err; fail "the client's refusal does not say why"; }
# The controller goes on.
"$BIN/sia-ctl" --config config.toml submit small.json >/dev/null 2>err ||
  fail "a small job after the refusals: $(cat err)"
want=$(($(rounds) + 2))
wait_for 60 "no rounds after the refusals" more_rounds
"$BIN/sia-ctl" --config config.toml -o json status >status.json 2>err || fail "status: $(cat err)"
json_check "the small job is known" status.json 'has(d, name="small")'
json_check "no refused job is known" status.json 'not has(d, name="big") and not has(d, name="long")'
grep -rlq yyyyyyyyyy state && fail "the refused command line reached the state directory"
grep -rlq xxxxxxxxxx state && fail "the refused command line reached the state directory"
# A round's kept Jobs document holds no commands.
last=$(ls state/rounds/*-jobs.json | tail -1)
json_check "$last holds no commands" "$last" 'not values(d, "command")'
json_check "$last holds the jobs" "$last" 'has(d, name="j00")'

# An agent trusts no abstract endpoint, and no socket directory others may write.
"$BIN/sia-run" --state-dir node agent --connect "ipc://@sia-e2e-$$" --node t4-0 >out 2>err
st=$?
[ $st -eq 78 ] || { cat err; fail "an abstract endpoint: status $st, expected 78"; }
[ "$(wc -l <err)" -eq 1 ] || { cat err; fail "an abstract endpoint: not one line"; }
grep -q "an abstract ipc:// endpoint has no directory to protect it" err || fail "$(cat err)"
mkdir -m 0777 open
chmod 0777 open
"$BIN/sia-run" --state-dir node agent --connect "ipc://$tmp/open/ctl" --node t4-0 >out 2>err
st=$?
[ $st -eq 77 ] || { cat err; fail "an open socket directory: status $st, expected 77"; }
[ "$(wc -l <err)" -eq 1 ] || { cat err; fail "an open socket directory: not one line"; }
grep -q "is writable by others: another user could have bound the controller's socket there" err ||
  fail "$(cat err)"

for p in $agent_pids; do kill "$p"; done
for p in $agent_pids; do wait "$p" || fail "an agent exited $? on SIGTERM"; done
kill "$ctl_pid"
wait "$ctl_pid"
st=$?
[ $st -eq 0 ] || fail "serve exited $st on SIGTERM"
echo "ok"
