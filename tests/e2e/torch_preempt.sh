#!/bin/sh
# sia.torch and SIGTERM: during the rendezvous (rank 0 of a 2-rank job started alone)
# the process exits 75 at once and the last checkpoint stands; in the middle of
# training, the step in progress ends, rank 0 writes a checkpoint and a "preempted"
# report, and the process exits 75.
#   torch_preempt.sh BIN_DIR SOURCE_DIR     (exit 77: no Python with torch)
. "$(dirname "$0")/lib/harness.sh"
need_torch
logs "$tmp/log"
export SIA_DEVICE=cpu SIA_JOB=p SIA_CKPT_DIR="$tmp/ckpt" SIA_REPORT="$tmp/reports.jsonl"
export SIA_REPORT_INTERVAL=0.2 MASTER_ADDR=127.0.0.1
EX="$SRC/examples/pytorch/cifar_cnn_sia.py"
# in_log PATTERN: the worker's log matches (for wait_for); a worker that exited fails.
in_log() {
  grep -q "$1" "$tmp/log" 2>/dev/null && return 0
  kill -0 "$pid" 2>/dev/null || fail "the worker exited early"
  return 1
}
# reported EXPR: some report line satisfies EXPR (over docs; a torn last line: not yet).
reported() { json_has "$tmp/reports.jsonl" "$1" 2>/dev/null; }
# reap: st = the worker's exit status (it exits within its grace: bounded).
reap() {
  wait "$pid"
  st=$?
}

# A first checkpoint, by a one-rank job that runs its 5 steps.
SIA_ROUND=1 "$PY" "$EX" --steps 5 --dataset-size 1024 2>"$tmp/log" ||
  fail "the first job exited $?"
before=$(cat "$tmp/ckpt/latest")
[ "$before" = "ckpt-000000000005.pt" ] || fail "latest names '$before'"

# SIGTERM while rank 0 waits for a rank 1 that never comes: 75 at once.
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RANK=0 WORLD_SIZE=2 MASTER_PORT=$port SIA_ROUND=2 SIA_RESTORE=1 SIA_RENDEZVOUS_TIMEOUT=60 \
  "$PY" "$EX" --steps 50 --dataset-size 1024 2>"$tmp/log" &
pid=$!
started "$pid"
wait_for 120 "'joining 2 rank(s)' in the log" in_log "joining 2 rank(s)"
kill -TERM "$pid"
reap
[ "$st" -eq 75 ] || fail "SIGTERM during the rendezvous: status $st, expected 75"
grep -q "signal 15 during the rendezvous" "$tmp/log" || fail "no rendezvous message"
[ "$(cat "$tmp/ckpt/latest")" = "$before" ] || fail "latest changed: $(cat "$tmp/ckpt/latest")"
echo "rendezvous: exit 75, latest still $before"

# SIGTERM in the middle of training: checkpoint at the step it stops at, 75.
SIA_ROUND=3 SIA_RESTORE=1 "$PY" "$EX" --epochs 1000 --dataset-size 1024 2>"$tmp/log" &
pid=$!
started "$pid"
wait_for 120 "'restored step 5' in the log" in_log "restored step 5 "
wait_for 120 "an interval report in round 3" reported 'has(docs, round=3, reason="interval")'
kill -TERM "$pid"
reap
[ "$st" -eq 75 ] || fail "SIGTERM while training: status $st, expected 75"
last=$(tail -1 "$tmp/reports.jsonl")
echo "$last" | json_has - 'd["reason"] == "preempted"' || fail "last report: $last"
step=$(echo "$last" | json_get - .step)
[ "$(cat "$tmp/ckpt/latest")" = "$(printf 'ckpt-%012d.pt' "$step")" ] ||
  fail "latest names $(cat "$tmp/ckpt/latest"), the preempted report step $step"
grep -q "preempted at step $step: checkpoint" "$tmp/log" || fail "no preempted line"
ls "$tmp/ckpt" | grep -q tmp && fail "temporary files left: $(ls "$tmp/ckpt")"
echo "ok: preempted at step $step with its checkpoint"
