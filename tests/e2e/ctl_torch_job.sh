#!/bin/sh
# A PyTorch job (examples/pytorch/cifar_cnn_sia.py) under the controller, on the CPU, in
# both ways of running a cluster: `sia-ctl round` from a loop with the default node
# commands, then `sia-ctl serve` with two `sia-run agent`s. The test decides where the job
# goes (a place stage that prints the test's placement file): one GPU of t4-0, grown to
# both, a batch-only change, then moved to t4-1. Checks: the growth restarts it from its
# checkpoint (same step); the batch change keeps its processes (a batch plan); the move
# resumes it on the other node from the checkpoint its old workers wrote (through the
# controller's checkpoint_root, which the agents are not told by hand), not from step 0;
# it finishes at exactly its step limit, once; and (round only) a job whose checkpoint
# vanished before a move is started afresh but loudly: the node's warning is journaled,
# status shows the real step and the steps lost, explain warns.
#   ctl_torch_job.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
need_torch
export SIA_RENDEZVOUS_TIMEOUT=60
# Enough steps that no phase below (grow, batch change, move) can be outrun by the job
# while a loaded machine delays the controller's rounds: with 300, the job once reached
# its end before the round that resized it had delivered the batch plan.
STEPS=1200
MODE=
NODES=

ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
stop_jobs() {
  for d in "$tmp"/*/nodes/* "$tmp"/nodes/*; do
    for j in cnn lost; do  # one at a time: naming a job the node never ran stops nothing
      [ -d "$d/jobs" ] && "$BIN/sia-run" --state-dir "$d" stop --grace 0 "$j"
    done
  done
}
at_exit stop_jobs
on_fail() {
  echo "in mode $MODE"
  ctl status
  for f in "$NODES"/*/jobs/*/supervisor.log "$NODES"/*/jobs/*/logs/rank-0.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -8 "$f"; }
  done
}
logs "$tmp/*.log" "$tmp/serve/*.log"
. "$E2E_LIB/cpu_pair.sh"
. "$E2E_LIB/agent_keys.sh"
reports() { cat "$NODES/$1/jobs/${2:-cnn}/reports.jsonl" 2>/dev/null; }
# reports_where NODE EXPR [JOB]: the job's reports on NODE for which EXPR (over d) holds.
reports_where() { reports "$1" "${3:-cnn}" | json_select - "$2" 2>/dev/null; }
# field NAME: the value of a field of the (first) report on stdin.
field() { json_get - ".$1"; }
# of_job NODE FIELD [JOB]: a field of the job's entry in its sia-run's status.
of_job() {
  "$BIN/sia-run" --state-dir "$NODES/$1" status -o json "${3:-cnn}" 2>/dev/null |
    json_eval - "[o['$2'] for o in find(d, name='${3:-cnn}') if '$2' in o][0]" 2>/dev/null
}
# gen NODE [JOB]: the job's round on NODE, as its sia-run says.
gen() { of_job "$1" round "${2:-cnn}"; }
pids() { of_job "$1" pids; }
# has_report NODE ROUND FIELDS [JOB]: a report of the job's ROUND on NODE has FIELDS
# (has()'s keywords: reason="interval").
has_report() { reports "$1" "${4:-cnn}" | json_has - "has(docs, round=$2, $3)" 2>/dev/null; }
has_interval() { has_report "$1" "$2" 'reason="interval"'; }
# started_on NODE [JOB]; gen_above NODE N: for wait_for (evaluated at every try).
started_on() { test -n "$(gen "$1" "${2:-cnn}")"; }
gen_above() { g=$(gen "$1" "${3:-cnn}") && [ -n "$g" ] && [ "$g" -gt "$2" ]; }

cpu_pair_cluster
# cnn's spec, ending at step $STEPS.
write_cnn() {
  cat >"$tmp/cnn.toml" <<TOML
name = "cnn"
model = "cifar10"
max_gpus = 2
command = ["$PY", "$SRC/examples/pytorch/cifar_cnn_sia.py", "--epochs", "1000",
           "--steps", "$STEPS", "--dataset-size", "1024"]
TOML
}
write_cnn
cat >lost.toml <<TOML
name = "lost"
model = "cifar10"
max_gpus = 1
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "100000000"]
TOML
# placement GPUS_T4_0 GPUS_T4_1 BATCH LOCAL ACCUM [LOST_GPU]: cnn's placement (and lost's
# on GPU LOST_GPU of t4-0), as the place stage prints it.
placement() {
  nodes=""
  [ -n "$1" ] && nodes="{\"name\": \"t4-0\", \"gpus\": [$1]}"
  [ -n "$2" ] && nodes="${nodes:+$nodes, }{\"name\": \"t4-1\", \"gpus\": [$2]}"
  lost=""
  [ -n "${6:-}" ] && lost=", {\"name\": \"lost\", \"gpu_type\": \"t4\", \"batch_size\": 32,
    \"local_bsz\": 32, \"accum_steps\": 0, \"nodes\": [{\"name\": \"t4-0\", \"gpus\": [$6]}]}"
  cat >"$tmp/placement.tmp" <<JSON
{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": [
  {"name": "cnn", "gpu_type": "t4", "batch_size": $3, "local_bsz": $4, "accum_steps": $5,
   "nodes": [$nodes]}$lost]}}
JSON
  mv "$tmp/placement.tmp" "$tmp/placement.json"
}

# The phases both modes go through; `step_round` makes the controller act on a new
# placement file (one `sia-ctl round`, or the daemon's next round by itself).
phases() {
  # 1: one replica on t4-0.
  placement 0 "" 16 16 0
  step_round
  wait_for 60 "cnn did not start on t4-0" started_on t4-0
  g1=$(gen t4-0)
  wait_for 60 "no report of round $g1" has_interval t4-0 "$g1"

  # 2: grown to two replicas: a restart from the checkpoint it writes on its way out.
  placement 0,1 "" 32 16 0
  step_round
  wait_for 60 "cnn was not restarted on two GPUs" gen_above t4-0 "$g1"
  g2=$(gen t4-0)
  wait_for 60 "no report of round $g2" has_interval t4-0 "$g2"
  s1=$(reports_where t4-0 "d.get('round') == $g1 and d.get('reason') == 'preempted'" | field step)
  f2=$(reports_where t4-0 "d.get('round') == $g2" | field step)
  [ -n "$s1" ] || fail "round $g1 left no preempted report"
  [ "$f2" -ge "$s1" ] || fail "grown: first report at step $f2, it stopped at $s1"
  echo "$MODE: grown at step $s1, resumed with 2 replicas at $f2"

  # 3: the batch alone changes (2 x 16 x 2 micro-steps): the same processes, a batch plan.
  before=$(pids t4-0)
  placement 0,1 "" 64 16 1
  step_round
  wait_for 60 "no report of batch plan 1" has_report t4-0 "$g2" 'plan=1'
  [ "$(gen t4-0)" = "$g2" ] || fail "the batch change restarted cnn"
  [ "$(pids t4-0)" = "$before" ] || fail "the batch change replaced the workers"
  reports_where t4-0 "d.get('round') == $g2 and d.get('plan') == 1" | tail -1 |
    json_has - 'd["accum_steps"] == 1' ||
    fail "the batch plan's report has not the new accumulation"
  echo "$MODE: batch changed in place (pids $before)"

  # 4: moved to t4-1: its old workers checkpoint, the new ones resume from it.
  placement "" 0,1 64 32 0
  step_round
  wait_for 60 "cnn did not start on t4-1" started_on t4-1
  g3=$(gen t4-1)
  wait_for 60 "no report of round $g3 on t4-1" has_interval t4-1 "$g3"
  s2=$(reports_where t4-0 "d.get('round') == $g2 and d.get('reason') == 'preempted'" | field step)
  f3=$(reports_where t4-1 "d.get('round') == $g3" | field step)
  [ -n "$s2" ] || fail "the move left no preempted report on t4-0"
  [ "$f3" -ge "$s2" ] || fail "moved: first report on t4-1 at step $f3, it stopped at $s2"
  grep -q "restored step $s2" "$NODES/t4-1/jobs/cnn/logs/rank-0.log" ||
    fail "t4-1's rank 0 did not restore step $s2"
  echo "$MODE: moved at step $s2, resumed on t4-1 at $f3"
}

# Runs until cnn has finished (the controller says so), then checks the end.
finish() {
  wait_for 480 "cnn did not finish" finished
  done_lines=$(reports t4-1 | json_eval - 'count(docs, reason="done")')
  [ "$done_lines" -eq 1 ] || fail "cnn reported done $done_lines times"
  last=$(reports_where t4-1 'd.get("reason") == "done"')
  [ "$(echo "$last" | field step)" -eq "$STEPS" ] || fail "cnn ended at: $last"
  ctl -o json status cnn | json_has - "has(d, name='cnn', step=$STEPS)" ||
    fail "status does not show step $STEPS"
  ctl -o json status cnn | json_has - 'has(d, name="cnn", lost_steps=0)' || fail "cnn lost steps"
  echo "$MODE: finished at exactly step $STEPS"
}
finished() {
  [ "$MODE" = round ] && { ctl -q round >/dev/null 2>&1 || true; }
  ctl -o json status cnn | json_has - 'has(d, name="cnn", state="finished")'
}

# ---- sia-ctl round, the default node commands (no --ckpt-root anywhere) ----
MODE=round
NODES=$tmp/state/nodes
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
time_limit = 1
[stages]
place = "cat $tmp/placement.json"
[nodes]
apply = ["sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node", "{node}",
         "--cluster", "{cluster}", "--jobs", "{jobs}", "--report-interval", "0.3",
         "--grace", "30", "-o", "json", "-"]
TOML
step_round() { ctl -q round >round.log 2>&1 || fail "round: $(cat round.log)"; }
ctl config | grep -q "controller.checkpoint_root .*$tmp/state/ckpt .*default" ||
  fail "checkpoint_root's default is not STATE/ckpt: $(ctl config | grep checkpoint_root)"
ctl submit cnn.toml >out 2>&1 || { cat out; fail "submit cnn"; }
phases
[ -f "$tmp/state/ckpt/cnn/latest" ] || fail "no checkpoint in the controller's checkpoint_root"

# The job whose checkpoint vanishes: started on t4-0, stopped, its checkpoints removed,
# started again on another GPU.
ctl submit lost.toml >out 2>&1 || { cat out; fail "submit lost"; }
placement "" 0,1 64 32 0 1
step_round
wait_for 60 "lost did not start" started_on t4-0 lost
gl=$(gen t4-0 lost)
wait_for 60 "lost sent no report" has_report t4-0 "$gl" 'reason="interval"' lost
step_round  # the controller reads its reports: it has trained
ctl -o json status lost | json_has - 'has(d, name="lost", step=0)' && fail "lost's step was not read"
placement "" 0,1 64 32 0
step_round  # lost waits: checkpoint-stopped on t4-0
rm -rf "$tmp/state/ckpt/lost"
placement "" 0,1 64 32 0 0
step_round
ctl -o json status lost | json_has - "match(d, 'notice', '^no checkpoint in $tmp/state/ckpt/lost')" ||
  fail "status does not tell of lost's missing checkpoint: $(ctl status lost)"
# Journaled with the round's delivery (then compacted into the snapshot with the job).
json_has state/journal.jsonl 'match(docs, "warning", "^no checkpoint in")' ||
  json_has state/snapshot.json 'match(d, "notice", "^no checkpoint in")' || fail "the warning is not kept"
wait_for 60 "lost did not start again" gen_above t4-0 "$gl" lost
gl=$(gen t4-0 lost)
wait_for 60 "lost did not report again" has_report t4-0 "$gl" 'reason="interval"' lost
step_round
ctl -o json status lost >lost.json || fail "status lost"
st=$(cat lost.json)
lost_steps=$(json_eval lost.json "find(d, name='lost')[0]['lost_steps']")
[ "$lost_steps" -ge 1 ] || fail "status shows no lost steps: $st"
real=$(reports t4-0 lost | tail -1 | field step)
shown=$(json_eval lost.json "find(d, name='lost')[0]['step']")
[ "$shown" -le "$real" ] || fail "status shows step $shown, the job is at $real"
ctl explain lost | grep -q "warning: .*steps lost" || fail "explain: $(ctl explain lost)"
echo "$MODE: a missing checkpoint was reported (status step $shown, $lost_steps steps lost)"
ctl cancel lost >/dev/null 2>&1 || fail "cancel lost"
placement "" 0,1 64 32 0
finish

# ---- sia-ctl serve with two agents (told nothing about checkpoints) ----
MODE=serve
mkdir serve && cd serve || fail "no serve directory"
NODES=$tmp/serve/nodes
sed -e 's/^state_dir = .*/state_dir = "state"/' -e 's/^time_limit = 1/&\nround = 1/' \
  -e 's|"cluster.toml"|"../cluster.toml"|' ../config.toml >config.toml
sed -i 's/^\[stages\]/bind = "tcp:\/\/127.0.0.1:*"\nallow = "keys\/allow.toml"\n&/' config.toml
agent_keys "$BIN" keys t4-0 t4-1
ctl() { "$BIN/sia-ctl" --config "$tmp/serve/config.toml" "$@"; }
"$BIN/sia-ctl" --config config.toml serve >ctl.log 2>&1 &
serve_pid=$!
started "$serve_pid"
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl.log; }
wait_for 30 "serve did not start: $(cat ctl.log)" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl.log | head -1)
for n in t4-0 t4-1; do
  "$BIN/sia-run" --state-dir "nodes/$n" agent --connect "$EP" --node "$n" \
    --server-key state/keys/server.pub --secret-key "keys/$n.key" --cluster ../cluster.toml --heartbeat-interval 0.5 --grace 30 --report-interval 0.3 \
    >"agent-$n.log" 2>&1 &
  started $!
done
placement "" "" 16 16 0  # nothing runs until the agents are there
# The daemon rounds by itself, faster than the phases are checked: a limit far enough
# away that the job is still training when the last phase begins.
STEPS=1500
write_cnn
ctl submit ../cnn.toml >out 2>&1 || { cat out; fail "submit cnn"; }
# The daemon rounds by itself; a round is over when its number has moved on.
round_no() { ctl -o json status | json_eval - 'd["data"]["round"]' 2>/dev/null; }
round_above() { r=$(round_no) && [ -n "$r" ] && [ "$r" -gt "$1" ]; }
step_round() {
  r0=$(round_no)
  wait_for 60 "the daemon did not run a round" round_above "$((${r0:-0} + 1))"
}
cd "$tmp/serve" || fail "no serve directory"
phases
[ -f "$tmp/serve/state/ckpt/cnn/latest" ] || fail "no checkpoint in the controller's checkpoint_root"
finish
kill "$serve_pid"
echo "ok"
