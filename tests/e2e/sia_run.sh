#!/bin/sh
# sia-run with real processes (/bin/sh workers, no GPU, no sia-worker): start, leave
# alone, restart on a placement change (the old ranks checkpoint and exit 75, the new
# round restores), stop and hold, the grace-period kill of a worker that ignores SIGTERM,
# `run` propagating a worker's exit status and being interrupted, state kept across
# invocations, --dry-run doing nothing, and bad inputs refused before anything starts.
#   sia_run.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
R=$BIN/sia-run
ST=$tmp/state
stop_jobs() {
  for j in a b c d; do "$R" --state-dir "$ST" stop --grace 0 "$j"; done
}
at_exit stop_jobs
on_fail() { [ -d "$ST" ] && "$R" --state-dir "$ST" status -o table; }
# sr ARGS...: sia-run on the test's state directory.
sr() { "$R" --state-dir "$ST" "$@"; }
# expect STATUS ARGS...: runs sia-run, checks its exit status; its stderr is in $tmp/err.
expect() {
  want=$1
  shift
  sr "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" -eq "$want" ] && return
  cat "$tmp/out" "$tmp/err"
  fail "sia-run $*: status $got, not $want"
}
# field JOB COLUMN: one column of `status -o table` for JOB (2 state, 3 round, 5 pids, 6 exit).
field() { sr status -o table "$1" | awk -v c="$2" 'NR == 2 { print $c }'; }
has() { grep -q -- "$2" "$1" 2>/dev/null; }
# ready_in LOG ROUND: the rank of LOG said "ready" in ROUND (its trap is set by then).
ready_in() { awk -v r="SIA_ROUND=$2 " 'index($0, r) { s = 1 } s && /^ready$/ { f = 1 } END { exit !f }' "$1" 2>/dev/null; }
# need FILE PATTERN WHAT: fails, showing FILE, unless it has a line matching PATTERN.
need() { has "$1" "$2" || { cat "$1"; fail "$3"; }; }

cat >cluster.toml <<'TOML'
name = "tiny"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 2
addresses = ["10.1.0.1", "10.1.0.2"]
TOML
# A worker following the contract: prints its environment, loops, and on SIGTERM writes a
# checkpoint and exits 75.
cat >worker.sh <<'SH'
trap 'echo "$SIA_ROUND" >"$SIA_CKPT_DIR/latest"; echo "rank $RANK checkpointed"; exit 75' TERM
echo "env RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE"
echo "env LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
echo "env MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT"
echo "env SIA_JOB=$SIA_JOB SIA_ROUND=$SIA_ROUND SIA_RESTORE=$SIA_RESTORE SIA_GPU_TYPE=$SIA_GPU_TYPE"
echo "env SIA_BATCH_SIZE=$SIA_BATCH_SIZE SIA_LOCAL_BSZ=$SIA_LOCAL_BSZ"
echo "env SIA_ACCUM_STEPS=$SIA_ACCUM_STEPS SIA_REPORT_INTERVAL=$SIA_REPORT_INTERVAL"
echo "env SIA_REPORT=$SIA_REPORT"
echo "env SIA_CKPT_DIR=$SIA_CKPT_DIR"
echo "ready"
while :; do sleep 0.1; done
SH
cat >jobs.json <<JSON
{"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": [
 {"name": "a", "model": "cifar10", "command": ["/bin/sh", "$tmp/worker.sh"]},
 {"name": "b", "model": "cifar10",
  "command": ["/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"]},
 {"name": "c", "model": "cifar10", "command": ["/bin/sh", "-c", "sleep 0.3; exit 3"]},
 {"name": "d", "model": "cifar10", "command": ["/bin/sh", "-c", "exit 0"]},
 {"name": "nocmd", "model": "cifar10"}]}}
JSON
# placement FILE JOB:NODE:GPUS...   e.g. placement p.json a:t4-0:0,1 a:t4-1:0
placement() {
  out=$1
  shift
  {
    printf '{"apiVersion": "sia/v1", "kind": "Placement",'
    printf ' "data": {"cluster_name": "tiny", "jobs": ['
    sep=""
    for spec in "$@"; do
      job=${spec%%:*}
      rest=${spec#*:}
      printf '%s{"name": "%s", "gpu_type": "t4", "nodes": [{"name": "%s", "gpus": [%s]}],' \
        "$sep" "$job" "${rest%%:*}" "${rest#*:}"
      printf ' "batch_size": 64, "local_bsz": 32, "accum_steps": 1}'
      sep=", "
    done
    printf ']}}\n'
  } >"$out"
}
placement p1.json a:t4-0:0,1
placement p2.json a:t4-0:2,3
placement p3.json b:t4-0:0
placement p4.json c:t4-0:0,1 d:t4-0:2
placement empty.json
placement nocmd.json nocmd:t4-0:0
placement elsewhere.json a:t4-1:0,1
A="--node t4-0 --cluster cluster.toml --jobs jobs.json"

# --- Bad inputs: clear errors, documented statuses, nothing done.
expect 78 apply --node t4-9 --cluster cluster.toml --jobs jobs.json p1.json
need "$tmp/err" '^sia-run: error: node "t4-9" is not in cluster tiny (t4-0, t4-1)$' \
  "unknown node message"
expect 65 apply $A nocmd.json
need "$tmp/err" 'job "nocmd" has no command to run' "no-command message"
expect 65 apply --node t4-0 --cluster cluster.toml p1.json
need "$tmp/err" 'job "a" is placed on node "t4-0" but no --jobs file was given' \
  "no --jobs message"
sed 's/t4-0/t4-7/' p1.json >bad.json
expect 65 apply $A bad.json
need "$tmp/err" 'bad.json: jobs\[0\].nodes\[0\].name: unknown node "t4-7"' "bad node message"
expect 65 apply $A jobs.json
need "$tmp/err" 'expected a document of kind Placement' "wrong kind message"
echo '{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": [' >trunc.json
expect 65 apply $A trunc.json
expect 66 apply $A missing.json
expect 64 apply $A --grace -1 p1.json
expect 64 apply $A --port-range 9-1 p1.json
expect 64 apply $A --bogus p1.json
expect 64
expect 66 stop nosuchjob
[ -e "$ST" ] && fail "a refused command created the state directory"

# --- --dry-run does nothing.
expect 0 apply $A --dry-run -o table p1.json
need "$tmp/out" '^a  *start  *1  *0,1  *new on this node' "dry-run plan"
need "$tmp/out" 'dry run: nothing was done' "dry-run note"
# The controller's round (metadata.round) numbers a new start, on every node alike.
sed 's/"kind": "Placement",/"kind": "Placement", "metadata": {"round": 7},/' p1.json >p1r.json
expect 0 apply $A --dry-run -o table p1r.json
need "$tmp/out" '^a  *start  *7  *0,1  *new on this node' "dry-run plan at the controller's round"
sed 's/"kind": "Placement",/"kind": "Placement", "metadata": {"round": "7"},/' p1.json >p1r.json
expect 65 apply $A --dry-run p1r.json
need "$tmp/err" 'metadata.round' "a bad metadata.round is named"
[ -e "$ST" ] && fail "--dry-run created the state directory"

# --- Start.
expect 0 apply $A p1.json
json_check "apply prints a RunPlan" "$tmp/out" 'd["kind"] == "RunPlan"'
json_check "apply starts a" "$tmp/out" 'has(d, job="a", action="start")'
L0=$ST/jobs/a/logs/rank-0.log
L1=$ST/jobs/a/logs/rank-1.log
wait_for 20 "rank 1 of a did not start" has "$L1" ready
wait_for 20 "rank 0 of a did not start" has "$L0" ready
[ "$(field a 2)" = running ] || fail "a is not running"
pids1=$(field a 5)
need "$L0" 'env RANK=0 LOCAL_RANK=0 WORLD_SIZE=2$' "rank 0 env"
need "$L1" 'env RANK=1 LOCAL_RANK=1 WORLD_SIZE=2$' "rank 1 env"
need "$L1" 'env LOCAL_WORLD_SIZE=2 CUDA_VISIBLE_DEVICES=1$' "rank 1 GPU"
need "$L1" 'env MASTER_ADDR=127.0.0.1 MASTER_PORT=29[5-9][0-9][0-9]$' "rendezvous env"
need "$L0" 'SIA_JOB=a SIA_ROUND=1 SIA_RESTORE=0 SIA_GPU_TYPE=t4$' "round-1 env"
need "$L0" 'SIA_BATCH_SIZE=64 SIA_LOCAL_BSZ=32$' "batch env"
need "$L0" 'SIA_ACCUM_STEPS=1 SIA_REPORT_INTERVAL=30$' "accum env"
need "$L0" "SIA_REPORT=$ST/jobs/a/reports.jsonl\$" "report env"
need "$L0" "SIA_CKPT_DIR=$ST/jobs/a/ckpt\$" "checkpoint env"
need "$L0" '^==== sia-run: .* job a round 1 rank 0/2 on t4-0 GPU 0 (t4) ====$' "log header"

# --- An unchanged placement leaves the job alone (same pids), from a fresh invocation.
expect 0 apply $A -o table p1.json
need "$tmp/out" '^a  *keep  *1  *0,1  *unchanged' "keep"
[ "$(field a 5)" = "$pids1" ] || fail "pids changed on an unchanged placement"
expect 0 apply $A --dry-run -o table p2.json
need "$tmp/out" '^a  *restart  *2  *2,3  *moved: GPUs 0,1 -> 2,3' "dry restart"
[ "$(field a 5)" = "$pids1" ] || fail "--dry-run restarted a"
if command -v flock >/dev/null 2>&1; then  # another sia-run holds the state directory
  flock -o "$ST/lock" sleep 10 &
  lock_pid=$!
  started $lock_pid
  wait_for 20 "flock did not take the lock" sh -c "! flock -n -o '$ST/lock' true"
  expect 75 apply $A p1.json
  has "$tmp/err" 'is in use by another sia-run.*try again later' || fail "lock message"
  kill $lock_pid
  wait $lock_pid 2>/dev/null
fi
expect 78 apply --node t4-1 --cluster cluster.toml --jobs jobs.json p1.json
need "$tmp/err" 'serves node "t4-0", not "t4-1"' "state dir of another node"

# --- A changed placement restarts: checkpoint, exit 75, next round restores.
expect 0 apply $A -o table p2.json
need "$tmp/out" '^a  *restart  *2  *2,3' "restart"
need "$L0" 'rank 0 checkpointed' "rank 0 was not asked to checkpoint"
need "$L0" 'ended: exit status 75' "rank 0 did not exit 75"
[ -f "$ST/jobs/a/ckpt/latest" ] || fail "no checkpoint"
wait_for 20 "round 2 does not restore" has "$L1" 'SIA_ROUND=2 SIA_RESTORE=1'
need "$L1" 'CUDA_VISIBLE_DEVICES=3$' "round 2 GPUs"
[ "$(field a 3)" = 2 ] || fail "round is not 2"
pids2=$(field a 5)
[ "$pids2" != "$pids1" ] || fail "restart kept the pids"
[ "$(grep -c '^==== sia-run' "$L0")" = 2 ] || fail "log not appended across rounds"

# --- stop: checkpoint-stop and hold; apply does not resume a held job.
ready2() { ready_in "$L0" 2 && ready_in "$L1" 2; }
wait_for 20 "round 2 not ready" ready2
expect 0 stop --dry-run a
[ "$(field a 2)" = running ] || fail "stop --dry-run stopped a"
expect 0 stop a
[ "$(field a 2)" = preempted ] || fail "stop: a is $(field a 2)"
[ "$(field a 6)" = 75 ] || fail "stop: exit $(field a 6)"
expect 0 apply $A -o table p2.json
need "$tmp/out" '^a  *leave  *2 .*stopped by sia-run stop' "held job resumed"
expect 0 apply $A -o table p1.json  # a new placement for a held job starts it again
need "$tmp/out" '^a  *start  *3  *0,1' "held job with a new placement"
wait_for 20 "round 3" has "$L0" 'SIA_ROUND=3 SIA_RESTORE=1'

# --- Moved off this node: stopped. The grace period kills a worker ignoring SIGTERM.
expect 0 apply $A -o table p3.json
need "$tmp/out" '^a  *stop  *3  *0,1  *no longer placed' "stop a"
wait_for 20 "b did not start" has "$ST/jobs/b/logs/rank-0.log" ready
t0=$(date +%s)
expect 0 apply $A --grace 1 -o table elsewhere.json
need "$tmp/out" '^b  *stop .*no longer placed' "stop b"
has "$tmp/out" '^a ' && fail "a is not on this node"
t1=$(date +%s)
[ $((t1 - t0)) -le 8 ] || fail "the grace kill took $((t1 - t0)) s"
[ "$(field b 2)" = killed ] || fail "b is $(field b 2), not killed"
[ "$(field b 6)" = 137 ] || fail "b's exit is $(field b 6)"
sr status -o json b | json_has - 'has(d, exit={"signal": 9})' || fail "b's rank was not SIGKILLed"

# --- run: foreground, exit status propagated like srun; state kept for status.
expect 0 run $A --dry-run -o table p4.json
[ -d "$ST/jobs/c" ] && fail "run --dry-run started c"
expect 3 run $A --grace 2 -o table p4.json
need "$tmp/out" '^c  *failed .* 3 ' "run's status table"
need "$tmp/out" '^d  *finished .* 0 ' "d did not finish"
[ "$(field d 2)" = finished ] || fail "d is not finished"
# apply leaves a failed and a finished job alone; run starts the failed one again.
expect 0 apply $A -o table p4.json
need "$tmp/out" '^c  *leave  *1 .*failed (exit status 3)' "failed job restarted"
need "$tmp/out" '^d  *leave  *1 .*finished' "finished job restarted"
expect 3 run $A -o table p4.json
[ "$(field c 3)" = 2 ] || fail "run did not run c again"

# --- run interrupted: the jobs checkpoint-stop, run exits 75.
"$R" --state-dir "$ST" run $A -o table p1.json >"$tmp/run.out" 2>"$tmp/run.err" &
run_pid=$!
started $run_pid
wait_for 20 "run did not start a" has "$L1" 'SIA_ROUND=4'
wait_for 20 "run did not start a (rank 0)" has "$L0" 'SIA_ROUND=4'
ready4() { ready_in "$L0" 4 && ready_in "$L1" 4; }
wait_for 20 "round 4 not ready" ready4
kill -INT $run_pid
wait $run_pid
rc=$?
if [ "$rc" -ne 75 ]; then
  cat "$tmp/run.out" "$tmp/run.err"
  fail "interrupted run exited $rc, not 75"
fi
[ "$(field a 2)" = preempted ] || fail "a is $(field a 2) after the interrupted run"

# --- status: JSON and table.
expect 0 status -o json
json_check "status document" "$tmp/out" 'd["kind"] == "RunStatus"'
json_check "status node" "$tmp/out" 'd["data"]["node"] == "t4-0"'
expect 66 status nosuchjob
expect 66 status ..
echo ok
