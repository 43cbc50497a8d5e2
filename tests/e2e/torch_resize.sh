#!/bin/sh
# A batch-only change under sia-run: the job keeps its GPUs and gets another batch,
# local batch and accumulation; sia-run "resize"s it in place by writing its batch
# plan (SIA_BATCH_PLAN) instead of restarting it.  The workers keep their process ids
# and the next report carries the new local batch, accumulation and "plan":1.
#   torch_resize.sh BIN_DIR SOURCE_DIR     (exit 77: no Python with torch, or a
#                                           sia-run without the resize action)
. "$(dirname "$0")/lib/harness.sh"
need_torch
ST=$tmp/state
export SIA_DEVICE=cpu SIA_RENDEZVOUS_TIMEOUT=60
sr() { "$BIN/sia-run" --state-dir "$ST" "$@"; }
at_exit sr stop --grace 0 train
on_fail() { sr status -o table; }
logs "$ST/jobs/train/logs/*.log"
R=$ST/jobs/train/reports.jsonl
# wait_report EXPR: until a report line satisfies EXPR (over docs: the lines).
reported() { json_has "$R" "$1" 2>/dev/null; }
wait_report() { wait_for 120 "no report where $1" reported "$1"; }
pids() { sr status -o json train | json_eval - 'sorted(values(d, "pid"))'; }

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
wait_report 'has(docs, reason="interval")'
sr apply $A --dry-run -o table p2.json >out 2>err || { cat out err; fail "apply --dry-run p2"; }
grep -q "train.*resize" out ||
  skip "this sia-run has no resize action for a batch-only change: $(cat out)"
before=$(pids)
sr apply $A -o table p2.json >out 2>err || { cat out err; fail "apply p2"; }
grep -q "train.*resize" out || { cat out; fail "p2 did not resize the job"; }
wait_report 'has(docs, plan=1)'
after=$(pids)
[ "$before" = "$after" ] || fail "the workers changed: $before -> $after"
next=$(json_eval "$R" 'find(docs, plan=1)[0]')
echo "$next" | json_has - 'd["local_bsz"] == 8' || fail "local batch after the plan: $next"
echo "$next" | json_has - 'd["accum_steps"] == 2' || fail "accumulation after the plan: $next"
echo "$next" | json_has - 'd["batch_size"] == 48' || fail "batch after the plan: $next"
json_has "$R" 'has(docs, plan=0)' || fail "no report before the plan"
[ "$(grep -c '^==== ' "$ST/jobs/train/logs/rank-0.log")" -eq 1 ] ||
  fail "rank 0 was restarted"
echo "ok: resized in place (pids $after): $next"
