#!/bin/sh
# The controller daemon on the CPU: `sia-ctl serve` and three `sia-run agent`s on loopback
# TCP with CURVE keys and an allow-list, the reference worker, and a client talking to the
# controller over the channel. Three jobs submitted at different times are scheduled and
# rescaled as others arrive; one agent is killed (kill -9; its node's workers killed as a
# dead machine's would be) and its jobs move elsewhere once it is fenced; the controller is
# killed (kill -9) and restarted mid-run; the killed agent comes back and is reconciled.
# Checks: every job finishes exactly once (one "done" report, its workers reached exactly
# their step limit), some job was rescaled, a client whose key is not on the allow-list is
# refused with 77 (as is an agent's key asking as a client, and a client without keys on
# loopback), a keyless agent refuses to start (78) as does one whose node is not in the
# cluster (refused at READY), a second serve on the same state directory exits 75 (as does a `sia-ctl round`), and serve exits 0 on SIGTERM.
# A fourth job fails at once (exit 3): explain shows its failing rank's log tail, and
# `sia-ctl logs` reads ranks' logs over the channel (the agents hand them back).
#   ctl_serve_agents.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
NODES="t4-0 t4-1 t4-2"
ctl_pid=
agent_pids=

ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
# What a dead machine does to its workers: they die, and nothing records why (a `sia-run
# stop` would mark them held, which no unchanged placement restarts).
kill_node_jobs() {
  [ -d "nodes/$1" ] || return 0
  pids=$("$BIN/sia-run" --state-dir "nodes/$1" status -o json |
    json_eval - '" ".join(str(p) for k in ("supervisor", "pid") for p in values(d, k))')
  [ -n "$pids" ] && kill -9 $pids 2>/dev/null
  return 0
}
stop_node_jobs() {  # at the end: checkpoint-stop whatever still runs
  # One job at a time: a stop naming a job the node never ran stops nothing (66).
  for j in a b c f; do
    [ -d "$tmp/nodes/$1" ] && "$BIN/sia-run" --state-dir "$tmp/nodes/$1" stop --grace 0 "$j" >/dev/null 2>&1
  done
}
serve_cleanup() {
  [ -n "$ctl_pid" ] && kill -9 "$ctl_pid"
  for p in $agent_pids; do kill -9 "$p"; done
  for n in $NODES; do stop_node_jobs "$n"; done
}
at_exit serve_cleanup
on_fail() {
  ctl -o json status 2>&1 | head -c 3000
  echo
}
logs "$tmp/ctl-*.log" "$tmp/agent-*.log" "$tmp/nodes/*/jobs/*/supervisor.log" \
  "$tmp/nodes/*/jobs/*/logs/rank-0.log"
. "$E2E_LIB/agent_keys.sh"
. "$E2E_LIB/job_history.sh"
is_running() { [ "$(job_state "$1")" = running ]; }
all_finished() {
  n=$(ctl -o json status 2>/dev/null | json_eval - 'count(d, state="finished")' 2>/dev/null)
  [ "$n" = 3 ]
}
connected() { [ "$(grep -c "$1 connected\|$1 reconnected" "$2")" -ge "${3:-1}" ]; }

cat >cluster.toml <<'TOML'
name = "cpu-three"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 2
count = 3
TOML
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
bind = "tcp://127.0.0.1:*"
round = 2.5
retention = 500
time_limit = 1
heartbeat_interval = 0.5
heartbeat_liveness = 8
fence_after = 5
secret_key = "keys/ctl.key"
allow = "allow.toml"
[client]
server_key = "keys/ctl.pub"
secret_key = "keys/alice.key"
TOML
# Keys: the controller, one per node (on the allow-list), a client on the list and one
# that is not.
agent_keys "$BIN" keys $NODES t9-9  # t9-9 has a key but is not in the cluster
for k in ctl alice mallory; do
  ctl keygen "keys/$k" >/dev/null || fail "keygen $k"
done
chmod 0644 keys/mallory.key
ctl --connect tcp://127.0.0.1:1 --server-key keys/ctl.pub --secret-key keys/mallory.key \
  status >out 2>&1
[ $? -eq 77 ] || { cat out; fail "a key file of mode 0644 was not refused with 77"; }
chmod 0600 keys/mallory.key
printf '[[client]]\nname = "alice"\nkey = "%s"\n' \
  "$(sed -n 's/^public *= *"\(.*\)"/\1/p' keys/alice.pub)" | cat keys/allow.toml - >allow.toml
# Run as root (the agents too), alice's jobs would be refused without a user (they would
# run as root): they run as nobody, who must reach their files under $tmp.
if [ "$(id -u)" -eq 0 ]; then
  chmod 0755 "$tmp"
  echo 'user = "nobody"' >>allow.toml
fi

STEPS=8000
job() {
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = 2
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "$STEPS"]
TOML
}
job a
job b
job c
cp "$SRC/tests/data/job-fails.toml" f.toml

# The controller; the first time on a free port, then on that port again.
start_ctl() {  # start_ctl LOG [BIND]
  if [ -n "${2:-}" ]; then
    "$BIN/sia-ctl" --config config.toml serve --bind "$2" >"$1" 2>&1 &
  else
    "$BIN/sia-ctl" --config config.toml serve >"$1" 2>&1 &
  fi
  ctl_pid=$!
  started "$ctl_pid"
}
start_ctl ctl-1.log
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl-1.log; }
wait_for 30 "serve did not start: $(cat ctl-1.log)" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl-1.log | head -1)
echo "controller at $EP"
echo "connect = \"$EP\"" >>config.toml  # [client] is the file's last section

start_agent() {  # start_agent NODE LOG
  "$BIN/sia-run" --state-dir "nodes/$1" agent --connect "$EP" --node "$1" \
    --cluster cluster.toml --server-key keys/ctl.pub --secret-key "keys/$1.key" \
    --heartbeat-interval 0.5 --heartbeat-liveness 8 --fence-after 5 --grace 10 \
    --ckpt-root "$tmp/ckpt" --report-interval 0.3 >"$2" 2>&1 &
  eval "agent_$(echo "$1" | tr - _)=$!"
  agent_pids="$agent_pids $!"
  started $!
}
for n in $NODES; do start_agent "$n" "agent-$n.log"; done
for n in $NODES; do wait_for 30 "agent $n did not connect" connected "$n" ctl-1.log; done

# A second controller on the same state directory: 75.
"$BIN/sia-ctl" --config config.toml serve --bind tcp://127.0.0.1:* >out 2>&1
[ $? -eq 75 ] || { cat out; fail "a second serve was not refused with 75"; }
"$BIN/sia-ctl" --config config.toml round >out 2>&1
[ $? -eq 75 ] || { cat out; fail "a round while serve runs was not refused with 75"; }

# Clients: a key that is not on the allow-list, and an agent's key, are refused (77).
ctl --secret-key keys/mallory.key status >out 2>&1
rc=$?
[ "$rc" -eq 77 ] || { cat out; fail "a client with an unknown key exited $rc, not 77"; }
logged_refusal() { grep -q "refused CURVE key" ctl-1.log; }
wait_for 10 "the refused key was not logged" logged_refusal
ctl --secret-key keys/t4-0.key status >out 2>&1
rc=$?
[ "$rc" -eq 77 ] || { cat out; fail "a client with an agent's key exited $rc, not 77"; }
# No unauthenticated way in, loopback included: a client without keys (and no state
# directory with the controller's admin key) is refused with 77, saying what to give.
mkdir -p nohome
HOME=$tmp/nohome XDG_CONFIG_HOME=$tmp/nohome "$BIN/sia-ctl" --connect "$EP" status >out 2>&1
rc=$?
[ "$rc" -eq 77 ] || { cat out; fail "a client without keys exited $rc, not 77"; }
grep -q "CURVE is mandatory on tcp, loopback included" out || { cat out; fail "keyless client"; }
# A keyless agent refuses to start, saying where the controller's key is.
"$BIN/sia-run" --state-dir nodes/keyless agent --connect "$EP" --node t4-0 >out 2>&1
rc=$?
[ "$rc" -eq 78 ] || { cat out; fail "a keyless agent exited $rc, not 78"; }
grep -q "STATE_DIR/keys/server.pub" out || { cat out; fail "the keyless agent's message"; }
# An agent with a valid key for a node that is not in the cluster is refused at READY and
# exits 78 with the controller's reason.
timeout 60 "$BIN/sia-run" --state-dir nodes/t9-9 agent --connect "$EP" --node t9-9 \
  --server-key keys/ctl.pub --secret-key keys/t9-9.key >out 2>&1
rc=$?
[ "$rc" -eq 78 ] || { cat out; fail "an agent of a node not in the cluster exited $rc, not 78"; }
grep -q 'node "t9-9" is not in cluster' out || { cat out; fail "the unknown node's message"; }

start=$(date +%s)
ctl submit a.toml >out 2>&1 || { cat out; fail "submit a"; }
grep -q "a .*queued" out || { cat out; fail "submit a: $(cat out)"; }
ctl submit a.toml >out 2>&1
[ $? -eq 65 ] || { cat out; fail "a second submit of a was not refused with 65"; }
ctl -o json status a | json_has - 'match(d, "identity", "^client:alice")' ||
  fail "the submitter was not recorded"
wait_for 30 "a did not start" is_running a
ctl submit f.toml >/dev/null 2>&1 || fail "submit f"
ctl submit b.toml >/dev/null 2>&1 || fail "submit b"
wait_for 30 "b did not start" is_running b
ctl submit c.toml >/dev/null 2>&1 || fail "submit c"
wait_for 30 "c did not start" is_running c
echo "three jobs running after $(($(date +%s) - start)) s"
# Following a running job's log over the channel: until SIGTERM, which exits 0. (Its
# node starts it when the round's ASSIGN is applied: until then it has no log there.)
has_log() { ctl logs c --tail 1 >/dev/null 2>&1; }
wait_for 30 "c has no log" has_log
timeout --preserve-status -s TERM 3 "$BIN/sia-ctl" --config "$tmp/config.toml" \
  logs c --follow >follow.out 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat follow.out; fail "logs --follow ended by SIGTERM exited $rc"; }
grep -q "^==== sia-run: .* job c round" follow.out || { cat follow.out; fail "logs --follow c"; }
is_failed() { [ "$(job_state f)" = failed ]; }
wait_for 30 "f did not fail" is_failed

# Kill the agent of a node that runs something, and its workers with it.
victim=
for n in t4-2 t4-1 t4-0; do
  "$BIN/sia-run" --state-dir "nodes/$n" -o json status 2>/dev/null | json_has - 'has(d, state="running")' &&
    { victim=$n; break; }
done
[ -n "$victim" ] || victim=t4-2
eval "vpid=\$agent_$(echo "$victim" | tr - _)"
kill -9 "$vpid"
kill_node_jobs "$victim"
echo "killed the agent of $victim at $(($(date +%s) - start)) s"

# Kill the controller mid-run (once it has run a round since), restart it on the same
# endpoint.
rounds() { grep -c "round [0-9]*:" ctl-1.log; }
more_rounds() { [ "$(rounds)" -gt "$rounds_then" ]; }
rounds_then=$(rounds)
wait_for 30 "no round after the agent's kill" more_rounds
running=$(ctl -o json status | json_eval - 'count(d["data"]["jobs"], state="running")')
kill -9 "$ctl_pid"
wait "$ctl_pid" 2>/dev/null
echo "killed the controller at $(($(date +%s) - start)) s ($running jobs running)"
start_ctl ctl-2.log "$EP"
for n in $NODES; do
  [ "$n" = "$victim" ] && continue
  wait_for 40 "agent $n did not come back to the new controller" connected "$n" ctl-2.log
done
# The dead node is fenced (by the new controller, after its fencing time: the lease its
# agent said to the first one is kept in STATE/leases.json, 0.5 x 9 + max(5, 10 + 10) + 10 +
# 10 = 44.5 s, but a remembered lease shorter than the assumed one is not taken -- it may be
# older than the agent (sia-ctl(1), FAILURE MODEL) -- so the assumed lease's 64.5 s from the
# restart) and its jobs move to the other nodes.
[ -f state/leases.json ] || fail "the controller kept no leases"
fenced() { grep -q "$victim is fenced\|$victim did not come back" ctl-1.log ctl-2.log; }
wait_for 100 "$victim was not fenced" fenced
grep -q "$victim is fenced\|$victim did not come back within 64.5 s" ctl-1.log ctl-2.log ||
  fail "$victim was not held for the assumed lease (its agent's remembered one is shorter)"
echo "$victim fenced at $(($(date +%s) - start)) s"
moved() {  # no job is placed on the dead node any more
  ctl -o json status >moved.json && ! json_has moved.json "has(d, name='$victim')"
}
wait_for 30 "the jobs of $victim did not move" moved
# The killed node comes back: reconciled by its next ASSIGN.
start_agent "$victim" "agent-$victim-2.log"
wait_for 40 "agent $victim did not come back" connected "$victim" ctl-2.log

wait_for 300 "not all jobs finished" all_finished
echo "all three jobs finished after $(($(date +%s) - start)) s"

# Exactly once: the controllers ended three jobs in all (a job ends once, and never
# runs after), and each job's workers reached exactly STEPS, never beyond.
ended=$(cat ctl-1.log ctl-2.log | sed -n 's/.* \([0-9]*\) ended,.*/\1/p' | awk '{s += $1} END {print s}')
[ "$ended" -le 4 ] || fail "$ended jobs ended, for three jobs and f"
for j in a b c; do
  max=$(max_step nodes/*/jobs/$j/reports.jsonl)
  [ "$max" = "$STEPS" ] || fail "job $j reached step $max, not $STEPS"
done
# Rescaled as others arrived: some job held 1 and 2 GPUs in different rounds.
rescaled=0
for j in a b c; do
  counts=$(gpu_counts "$j" "$ST"/rounds/r*-placement.json)
  [ "$counts" -gt 1 ] && rescaled=$((rescaled + 1))
done
[ "$rescaled" -ge 1 ] || fail "no job was rescaled"
echo "rescaled jobs: $rescaled"
ctl status >out || fail "status"
[ "$(grep -c ' finished ' out)" -eq 3 ] || { cat out; fail "status table"; }
ctl nodes >out || fail "nodes"
ctl explain a >out || fail "explain"
ctl explain nosuch >out 2>&1
[ $? -eq 66 ] || { cat out; fail "explain of an unknown job did not exit 66"; }
# The failed job's log tail in explain; logs over the channel.
ctl explain f >out || fail "explain f"
grep -q "the last lines of rank 0's log on t4-" out || { cat out; fail "explain f: no log tail"; }
grep -q "| boom" out || { cat out; fail "explain f: the tail lacks the error line"; }
ctl logs f >out || { cat out; fail "logs f"; }
grep -q "^starting$" out && grep -q "^boom$" out || { cat out; fail "logs f: $(cat out)"; }
[ "$(ctl logs f --tail 2 | head -1)" = "boom" ] || fail "logs f --tail 2: $(ctl logs f --tail 2)"
ctl logs a --tail 1 >out || { cat out; fail "logs a --tail 1"; }
[ "$(wc -l <out)" -eq 1 ] || { cat out; fail "logs a --tail 1 printed $(wc -l <out) lines"; }
ctl -o json logs a --tail 1 | json_has - 'd["kind"] == "JobLog"' || fail "logs -o json: no JobLog"
ctl logs a --rank 2 >out 2>&1
[ $? -eq 64 ] || { cat out; fail "logs of a rank out of range did not exit 64"; }
ctl logs nosuch >out 2>&1
[ $? -eq 66 ] || { cat out; fail "logs of an unknown job did not exit 66"; }

# SIGTERM: the controller stops cleanly.
kill -TERM "$ctl_pid"
wait "$ctl_pid"
rc=$?
ctl_pid=
[ "$rc" -eq 0 ] || fail "serve exited $rc on SIGTERM"
grep -q "stopping" ctl-2.log || fail "serve did not say it stops"
echo "ok ($(($(date +%s) - start)) s)"
