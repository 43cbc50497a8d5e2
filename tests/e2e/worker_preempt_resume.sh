#!/bin/sh
# The worker contract end to end on the CPU: a 2-replica job trains and reports to a file,
# gets SIGTERM, checkpoints and exits 75 on every rank; restarted with SIA_RESTORE=1 as 3
# replicas with another batch size (and gradient accumulation) it resumes at the step
# where it stopped -- same data position, loss still going down -- and, once more restored
# with a step limit, finishes with status 0.
#   worker_preempt_resume.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/losses.sh"
W=$BIN/sia-worker
logs "$tmp/log.*"

export SIA_JOB=e2e-preempt SIA_CKPT_DIR=$tmp/ck
export SIA_REPORT=$tmp/reports.jsonl SIA_REPORT_INTERVAL=0.2 SIA_RENDEZVOUS_TIMEOUT=60
export MASTER_ADDR=127.0.0.1
port=$((20000 + $$ % 20000))

# field NAME: the value of a field of the report on stdin.
field() { json_get - ".$1"; }
# reports_of ROUND: the round's reports, one a line, in order.
reports_of() { [ -f "$SIA_REPORT" ] && json_select "$SIA_REPORT" "d.get('round') == $1" 2>/dev/null; }

# start ROUND WORLD LOCAL_BSZ ACCUM RESTORE [ARGS...]: one process per rank, in background.
start() {
  round=$1 world=$2 local=$3 accum=$4 restore=$5
  shift 5
  pids=
  r=0
  while [ "$r" -lt "$world" ]; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$world LOCAL_WORLD_SIZE=$world \
      MASTER_PORT=$((port + round)) SIA_ROUND=$round SIA_LOCAL_BSZ=$local \
      SIA_ACCUM_STEPS=$accum SIA_BATCH_SIZE=$((local * world * (accum + 1))) \
      SIA_RESTORE=$restore "$W" "$@" 2>"$tmp/log.$round.$r" &
    pids="$pids $!"
    started $!
    r=$((r + 1))
  done
}

# wait_step ROUND STEP: until a report of ROUND has reached STEP (120 s at most).
reached() { s=$(reports_of "$1" | tail -1 | field step 2>/dev/null) && [ -n "$s" ] && [ "$s" -ge "$2" ]; }
wait_step() { wait_for 120 "round $1 did not reach step $2" reached "$1" "$2"; }

# stop_all EXPECTED: SIGTERM to every rank, each must exit with EXPECTED.
stop_all() {
  for p in $pids; do kill -TERM "$p"; done
  for p in $pids; do
    wait "$p"
    st=$?
    [ "$st" -eq "$1" ] || fail "a rank exited $st, expected $1"
  done
  pids=
}

# Round 1: 2 replicas x 16 = batch 32.
start 1 2 16 0 0 --steps 100000000
wait_step 1 1500
stop_all 75
[ -f "$tmp/ck/latest" ] || fail "no checkpoint after SIGTERM"
last1=$(reports_of 1 | tail -1)
[ "$(echo "$last1" | field reason)" = preempted ] || fail "no final report: $last1"
s1=$(echo "$last1" | field step)
# Losses (lib/losses.sh): the first report's, over the steepest steps from 0 (fewer steps
# only make it higher), and the mean per step over round 1's last reports.
l0=$(reports_of 1 | head -1 | loss_over 0)
l1=$(reports_of 1 | tail -4 | loss_over -)
[ "$(echo "$last1" | field samples)" -eq $((s1 * 32)) ] || fail "data position"
echo "round 1: preempted at step $s1; loss $l0 -> $l1"
for k in type job round step epoch progress loss step_time sync_time local_bsz \
         accum_steps world_size grad_sqr grad_var; do
  echo "$last1" | json_has - "'$k' in d" || fail "report lacks $k: $last1"
done

# Round 2: restored as 3 replicas x 8 x 2 micro-steps = batch 48.
start 2 3 8 1 1 --steps 100000000
wait_step 2 $((s1 + 2000))
stop_all 75
first2=$(reports_of 2 | head -1)
last2=$(reports_of 2 | tail -1)
f2=$(echo "$first2" | field step)
s2=$(echo "$last2" | field step)
l2f=$(reports_of 2 | head -2 | loss_over "$s1")
l2=$(reports_of 2 | tail -4 | loss_over -)
[ -n "$l0" ] && [ -n "$l1" ] && [ -n "$l2f" ] && [ -n "$l2" ] || fail "reports without a loss"
echo "round 2: resumed after step $s1 (first report at $f2), preempted at $s2; loss $l2f -> $l2"
[ "$f2" -gt "$s1" ] || fail "round 2 restarted: first report at step $f2"
echo "$last2" | json_has - 'd["world_size"] == 3' || fail "world size: $last2"
echo "$last2" | json_has - 'd["local_bsz"] == 8' || fail "local batch: $last2"
echo "$last2" | json_has - 'd["accum_steps"] == 1' || fail "accumulation: $last2"
[ "$(echo "$last2" | field samples)" -eq $((s1 * 32 + (s2 - s1) * 48)) ] || fail "data position"
grep -q "restored step $s1 " "$tmp/log.2.0" || fail "rank 0 did not restore step $s1"
# No restart from scratch: the first loss after resuming is near where round 1 ended, far
# below the start; and training keeps improving.
awk -v a="$l2f" -v b="$l0" -v c="$l1" 'BEGIN { exit !(a < 0.8 * b && a < 1.25 * c) }' ||
  fail "loss after resuming ($l2f) is not near where it stopped ($l1)"
awk -v a="$l2" -v b="$l1" 'BEGIN { exit !(a < b) }' || fail "loss did not decrease ($l1 -> $l2)"

# Round 3: one replica, with an end in sight: exit 0 at exactly that step.
start 3 1 32 0 1 --steps $((s2 + 20))
for p in $pids; do
  wait "$p"
  st=$?
  [ "$st" -eq 0 ] || fail "round 3 exited $st"
done
pids=
last3=$(reports_of 3 | tail -1)
[ "$(echo "$last3" | field reason)" = done ] || fail "round 3 final report: $last3"
[ "$(echo "$last3" | field step)" -eq $((s2 + 20)) ] || fail "round 3 ended at the wrong step"
echo ok
