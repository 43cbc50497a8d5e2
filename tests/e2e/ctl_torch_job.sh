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
set -u
BIN="$(cd "$1" && pwd)"
SRC="$(cd "$2" && pwd)"
PY=${SIA_PYTHON:-/usr/bin/python3}
"$PY" -c "import torch" >/dev/null 2>&1 || { echo "skipped: no PyTorch for $PY"; exit 77; }
tmp=$(mktemp -d)
export NO_COLOR=1 CUDA_VISIBLE_DEVICES= SIA_RENDEZVOUS_TIMEOUT=60 OMP_NUM_THREADS=1
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
unset SIA_CLUSTER SIA_STATE_DIR SIA_CONFIG SIA_CTL_STATE_DIR SIA_CLIENT_CONNECT
unset SIA_CHECKPOINT_ROOT
export XDG_CONFIG_HOME=$tmp/xdg
PATH=$BIN:$PATH
# Enough steps that no phase below (grow, batch change, move) can be outrun by the job
# while a loaded machine delays the controller's rounds: with 300, the job once reached
# its end before the round that resized it had delivered the batch plan.
STEPS=1200
pids_to_kill=
cd "$tmp" || exit 1

ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
cleanup() {
  for p in $pids_to_kill; do kill -9 "$p" 2>/dev/null; done
  for d in "$tmp"/*/nodes/* "$tmp"/nodes/*; do
    for j in cnn lost; do  # one at a time: naming a job the node never ran stops nothing
      [ -d "$d/jobs" ] && "$BIN/sia-run" --state-dir "$d" stop --grace 0 "$j" >/dev/null 2>&1
    done
  done
  wait 2>/dev/null
  [ -n "${SIA_E2E_KEEP:-}" ] && { rm -rf "$SIA_E2E_KEEP"; cp -r "$tmp" "$SIA_E2E_KEEP"; }
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
  echo "FAIL ($MODE): $*"
  ctl status 2>&1
  for f in "$NODES"/*/jobs/*/supervisor.log ./*.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -5 "$f"; }
  done
  for f in "$NODES"/*/jobs/*/logs/rank-0.log; do [ -f "$f" ] && { echo "--- $f"; tail -8 "$f"; }; done
  exit 1
}
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
. "$SRC/tests/e2e/lib/wait_for.sh"
. "$SRC/tests/e2e/lib/cpu_pair.sh"
. "$SRC/tests/e2e/lib/agent_keys.sh"
reports() { cat "$NODES/$1/jobs/${2:-cnn}/reports.jsonl" 2>/dev/null; }
# gen NODE [JOB]: the job's round on NODE, as its sia-run says.
gen() {
  "$BIN/sia-run" --state-dir "$NODES/$1" status -o json "${2:-cnn}" 2>/dev/null | tr -d ' \n' |
    sed -n 's/.*"round":\([0-9]*\).*/\1/p'
}
pids() {
  "$BIN/sia-run" --state-dir "$NODES/$1" status -o json cnn | tr -d ' \n' |
    sed -n 's/.*"pids":\[\([0-9,]*\)\].*/\1/p'
}
# has_report NODE ROUND PATTERN [JOB]: a report of the job's ROUND on NODE matches PATTERN.
has_report() { reports "$1" "${4:-cnn}" | grep "\"round\":$2," | grep -q "$3"; }
has_interval() { has_report "$1" "$2" '"reason":"interval"'; }
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
  s1=$(reports t4-0 | grep "\"round\":$g1," | grep '"reason":"preempted"' | field step)
  f2=$(reports t4-0 | grep "\"round\":$g2," | head -1 | field step)
  [ -n "$s1" ] || fail "round $g1 left no preempted report"
  [ "$f2" -ge "$s1" ] || fail "grown: first report at step $f2, it stopped at $s1"
  echo "$MODE: grown at step $s1, resumed with 2 replicas at $f2"

  # 3: the batch alone changes (2 x 16 x 2 micro-steps): the same processes, a batch plan.
  before=$(pids t4-0)
  placement 0,1 "" 64 16 1
  step_round
  wait_for 60 "no report of batch plan 1" has_report t4-0 "$g2" '"plan":1'
  [ "$(gen t4-0)" = "$g2" ] || fail "the batch change restarted cnn"
  [ "$(pids t4-0)" = "$before" ] || fail "the batch change replaced the workers"
  reports t4-0 | grep "\"round\":$g2," | grep '"plan":1' | tail -1 | grep -q '"accum_steps":1' ||
    fail "the batch plan's report has not the new accumulation"
  echo "$MODE: batch changed in place (pids $before)"

  # 4: moved to t4-1: its old workers checkpoint, the new ones resume from it.
  placement "" 0,1 64 32 0
  step_round
  wait_for 60 "cnn did not start on t4-1" started_on t4-1
  g3=$(gen t4-1)
  wait_for 60 "no report of round $g3 on t4-1" has_interval t4-1 "$g3"
  s2=$(reports t4-0 | grep "\"round\":$g2," | grep '"reason":"preempted"' | field step)
  f3=$(reports t4-1 | grep "\"round\":$g3," | head -1 | field step)
  [ -n "$s2" ] || fail "the move left no preempted report on t4-0"
  [ "$f3" -ge "$s2" ] || fail "moved: first report on t4-1 at step $f3, it stopped at $s2"
  grep -q "restored step $s2" "$NODES/t4-1/jobs/cnn/logs/rank-0.log" ||
    fail "t4-1's rank 0 did not restore step $s2"
  echo "$MODE: moved at step $s2, resumed on t4-1 at $f3"
}

# Runs until cnn has finished (the controller says so), then checks the end.
finish() {
  wait_for 480 "cnn did not finish" finished
  done_lines=$(reports t4-1 | grep -c '"reason":"done"')
  [ "$done_lines" -eq 1 ] || fail "cnn reported done $done_lines times"
  last=$(reports t4-1 | grep '"reason":"done"')
  [ "$(echo "$last" | field step)" -eq "$STEPS" ] || fail "cnn ended at: $last"
  ctl -o json status cnn | tr -d ' \n' | grep -q "\"step\":$STEPS," ||
    fail "status does not show step $STEPS"
  ctl -o json status cnn | tr -d ' \n' | grep -q '"lost_steps":0' || fail "cnn lost steps"
  echo "$MODE: finished at exactly step $STEPS"
}
finished() {
  [ "$MODE" = round ] && { ctl -q round >/dev/null 2>&1 || true; }
  ctl -o json status cnn | tr -d ' \n' | grep -q '"state":"finished"'
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
wait_for 60 "lost sent no report" has_report t4-0 "$gl" '"reason":"interval"' lost
step_round  # the controller reads its reports: it has trained
ctl -o json status lost | tr -d ' \n' | grep -q '"step":0,' && fail "lost's step was not read"
placement "" 0,1 64 32 0
step_round  # lost waits: checkpoint-stopped on t4-0
rm -rf "$tmp/state/ckpt/lost"
placement "" 0,1 64 32 0 0
step_round
ctl -o json status lost | grep -q "\"notice\":\"no checkpoint in $tmp/state/ckpt/lost" ||
  fail "status does not tell of lost's missing checkpoint: $(ctl status lost)"
# Journaled with the round's delivery (then compacted into the snapshot with the job).
grep -q '"warning":"no checkpoint in' state/journal.jsonl ||
  grep -q '"notice":"no checkpoint in' state/snapshot.json || fail "the warning is not kept"
wait_for 60 "lost did not start again" gen_above t4-0 "$gl" lost
gl=$(gen t4-0 lost)
wait_for 60 "lost did not report again" has_report t4-0 "$gl" '"reason":"interval"' lost
step_round
st=$(ctl -o json status lost | tr -d ' \n')
echo "$st" | grep -q '"lost_steps":[1-9]' || fail "status shows no lost steps: $st"
real=$(reports t4-0 lost | tail -1 | field step)
shown=$(echo "$st" | sed -n 's/.*"step":\([0-9]*\),.*/\1/p')
[ "$shown" -le "$real" ] || fail "status shows step $shown, the job is at $real"
ctl explain lost | grep -q "warning: .*steps lost" || fail "explain: $(ctl explain lost)"
echo "$MODE: a missing checkpoint was reported (status step $shown, $(echo "$st" |
  sed -n 's/.*"lost_steps":\([0-9]*\).*/\1/p') steps lost)"
ctl cancel lost >/dev/null 2>&1 || fail "cancel lost"
placement "" 0,1 64 32 0
finish

# ---- sia-ctl serve with two agents (told nothing about checkpoints) ----
MODE=serve
mkdir serve && cd serve || exit 1
NODES=$tmp/serve/nodes
sed -e 's/^state_dir = .*/state_dir = "state"/' -e 's/^time_limit = 1/&\nround = 1/' \
  -e 's|"cluster.toml"|"../cluster.toml"|' ../config.toml >config.toml
sed -i 's/^\[stages\]/bind = "tcp:\/\/127.0.0.1:*"\nallow = "keys\/allow.toml"\n&/' config.toml
agent_keys "$BIN" keys t4-0 t4-1
ctl() { "$BIN/sia-ctl" --config "$tmp/serve/config.toml" "$@"; }
"$BIN/sia-ctl" --config config.toml serve >ctl.log 2>&1 &
pids_to_kill="$pids_to_kill $!"
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl.log; }
wait_for 30 "serve did not start: $(cat ctl.log)" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl.log | head -1)
for n in t4-0 t4-1; do
  "$BIN/sia-run" --state-dir "nodes/$n" agent --connect "$EP" --node "$n" \
    --server-key state/keys/server.pub --secret-key "keys/$n.key" --cluster ../cluster.toml --heartbeat-interval 0.5 --grace 30 --report-interval 0.3 \
    >"agent-$n.log" 2>&1 &
  pids_to_kill="$pids_to_kill $!"
done
placement "" "" 16 16 0  # nothing runs until the agents are there
# The daemon rounds by itself, faster than the phases are checked: a limit far enough
# away that the job is still training when the last phase begins.
STEPS=1500
write_cnn
ctl submit ../cnn.toml >out 2>&1 || { cat out; fail "submit cnn"; }
# The daemon rounds by itself; a round is over when its number has moved on.
round_no() { ctl -o json status | tr -d ' \n' | sed -n 's/.*"round":\([0-9]*\).*/\1/p'; }
round_above() { r=$(round_no) && [ -n "$r" ] && [ "$r" -gt "$1" ]; }
step_round() {
  r0=$(round_no)
  wait_for 60 "the daemon did not run a round" round_above "$((${r0:-0} + 1))"
}
cd "$tmp/serve" || exit 1
phases
[ -f "$tmp/serve/state/ckpt/cnn/latest" ] || fail "no checkpoint in the controller's checkpoint_root"
finish
kill "$(echo $pids_to_kill | cut -d' ' -f1)" 2>/dev/null
echo "ok"
