#!/bin/sh
# A batch-only change under sia-run: the job keeps its GPUs and gets another batch,
# local batch and accumulation; sia-run "resize"s it in place by writing its batch
# plan (SIA_BATCH_PLAN) instead of restarting it.  The workers keep their process ids
# and the next report carries the new local batch, accumulation and "plan":1.
#   torch_resize.sh BIN_DIR SOURCE_DIR     (exit 77: no Python with torch, or a
#                                           sia-run without the resize action)
set -u
BIN="$(cd "$1" && pwd)"
SRC="$(cd "$2" && pwd)"
PY=${SIA_PYTHON:-/usr/bin/python3}
"$PY" -c 'import torch' 2>/dev/null || { echo "skip: $PY cannot import torch"; exit 77; }
tmp=$(mktemp -d)
ST=$tmp/state
export NO_COLOR=1 CUDA_VISIBLE_DEVICES= SIA_DEVICE=cpu SIA_RENDEZVOUS_TIMEOUT=60
export PYTHONPATH="$SRC/python" OMP_NUM_THREADS=1
unset SIA_CLUSTER SIA_STATE_DIR
sr() { "$BIN/sia-run" --state-dir "$ST" "$@"; }
cleanup() {
  sr stop --grace 0 train >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
  echo "FAIL: $*"
  sr status -o table
  for f in "$ST"/jobs/train/logs/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -8 "$f"; }; done
  exit 1
}
cd "$tmp" || exit 1
R=$ST/jobs/train/reports.jsonl
# wait_report PATTERN: until a report line matches (bounded).
wait_report() {
  i=0
  until grep -q "$1" "$R" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -gt 600 ] && fail "no report matching $1"
    sleep 0.1
  done
}
pids() { sr status -o json train | grep -o '"pid":[0-9]*' | sort | tr '\n' ' '; }

cat >cluster.toml <<'TOML'
name = "cpu-box"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 1
TOML
cat >jobs.json <<JSON
{"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": [
 {"name": "train", "model": "cnn",
  "command": ["$PY", "$SRC/examples/pytorch/cifar_cnn_sia.py", "--epochs", "1000",
              "--dataset-size", "2048"]}]}}
JSON
# placement FILE BATCH LOCAL ACCUM: the job on GPUs 0 and 1 of node t4-0.
placement() {
  printf '{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": [{"name": "train",
    "gpu_type": "t4", "nodes": [{"name": "t4-0", "gpus": [0, 1]}], "batch_size": %s,
    "local_bsz": %s, "accum_steps": %s}]}}\n' "$2" "$3" "$4" >"$1"
}
placement p1.json 32 16 0
placement p2.json 48 8 2
A="--node t4-0 --cluster cluster.toml --jobs jobs.json --grace 30 --report-interval 0.2"

sr apply $A -o table p1.json >out 2>err || { cat out err; fail "apply p1"; }
grep -q "train.*start" out || { cat out; fail "p1 did not start the job"; }
wait_report '"reason":"interval"'
sr apply $A --dry-run -o table p2.json >out 2>err || { cat out err; fail "apply --dry-run p2"; }
if ! grep -q "train.*resize" out; then
  echo "skip: this sia-run has no resize action for a batch-only change:"
  cat out
  exit 77
fi
before=$(pids)
sr apply $A -o table p2.json >out 2>err || { cat out err; fail "apply p2"; }
grep -q "train.*resize" out || { cat out; fail "p2 did not resize the job"; }
wait_report '"plan":1,'
after=$(pids)
[ "$before" = "$after" ] || fail "the workers changed: $before -> $after"
next=$(grep '"plan":1,' "$R" | head -1)
echo "$next" | grep -q '"local_bsz":8,' || fail "local batch after the plan: $next"
echo "$next" | grep -q '"accum_steps":2,' || fail "accumulation after the plan: $next"
echo "$next" | grep -q '"batch_size":48,' || fail "batch after the plan: $next"
grep -q '"plan":0,' "$R" || fail "no report before the plan"
[ "$(grep -c '^==== ' "$ST/jobs/train/logs/rank-0.log")" -eq 1 ] ||
  fail "rank 0 was restarted"
echo "ok: resized in place (pids $after): $next"
