#!/bin/sh
# sia-run and sia-worker together, the issue's end-to-end check on the CPU: a placement
# starts a 2-replica job; a new placement gives it 3 replicas and another batch size, so
# sia-run checkpoint-stops it (the ranks exit 75) and restarts it restoring; the worker
# resumes at the step where it stopped with the loss where it was, keeps improving, and
# reports keep arriving; a placement that changes only the batch resizes it in place (same
# pids, batch plan 1 in the next report); the per-rank logs hold both rounds; an empty placement
# checkpoint-stops it (preempted); a last placement runs it to its step limit (finished).
#   run_worker_rescale.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/losses.sh"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
sr() { "$BIN/sia-run" --state-dir "$ST" "$@"; }
at_exit sr stop --grace 0 train
on_fail() { sr status -o table; }
logs "$ST/jobs/train/logs/*.log"
R=$ST/jobs/train/reports.jsonl
# field NAME: the value of a field of the report on stdin.
field() { json_get - ".$1"; }
# reports_of ROUND: the round's reports, one a line, in order.
reports_of() { [ -f "$R" ] && json_select "$R" "d.get('round') == $1" 2>/dev/null; }
# wait_reports ROUND N: until ROUND has sent N interval reports (90 s at most).
has_reports() { [ "$(reports_of "$1" | json_eval - 'count(docs, reason="interval")')" -ge "$2" ]; }
wait_reports() { wait_for 90 "round $1 did not send $2 reports" has_reports "$1" "$2"; }

cat >cluster.toml <<'TOML'
name = "cpu-box"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 1
TOML
# jobs STEPS: the job's spec, its command the reference worker on the CPU.
jobs() {
  cat >jobs.json <<JSON
{"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": [
 {"name": "train", "model": "cifar10",
  "command": ["$BIN/sia-worker", "--device", "cpu", "--steps", "$1"]}]}}
JSON
}
# placement FILE GPUS BATCH LOCAL ACCUM: the job on node t4-0 (no GPUS: an empty placement).
placement() {
  if [ -z "$2" ]; then
    echo '{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": []}}' >"$1"
    return
  fi
  printf '{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": [{"name": "train",
    "gpu_type": "t4", "nodes": [{"name": "t4-0", "gpus": [%s]}], "batch_size": %s,
    "local_bsz": %s, "accum_steps": %s}]}}\n' "$2" "$3" "$4" "$5" >"$1"
}
placement p1.json 0,1 32 16 0
placement p2.json 0,1,2 48 8 1
placement p2b.json 0,1,2 48 16 0
placement p3.json "" 0 0 0
placement p4.json 3 32 32 0
A="--node t4-0 --cluster cluster.toml --jobs jobs.json --grace 30 --report-interval 0.2"
jobs 100000000

# Round 1: 2 replicas x 16.
sr apply $A -o table p1.json >out 2>err || { cat out err; fail "apply p1"; }
grep -q "train.*start" out || { cat out; fail "p1 did not start the job"; }
wait_reports 1 4

# Round 2: 3 replicas x 8 x 2 micro-steps; sia-run restarts the job.
sr apply $A -o table p2.json >out 2>err || { cat out err; fail "apply p2"; }
grep -q "train.*restart" out || { cat out; fail "p2 did not restart the job"; }
last1=$(reports_of 1 | tail -1)
[ "$(echo "$last1" | field reason)" = preempted ] || fail "no final report in round 1: $last1"
s1=$(echo "$last1" | field step)
# Losses (lib/losses.sh): the first report's, over the steepest steps from 0 (fewer steps
# only make it higher), and the mean per step over round 1's last reports.
l0=$(reports_of 1 | head -1 | loss_over 0)
l1=$(reports_of 1 | tail -4 | loss_over -)
wait_reports 2 4
first2=$(reports_of 2 | head -1)
f2=$(echo "$first2" | field step)
l2f=$(reports_of 2 | head -2 | loss_over "$s1")
[ -n "$l0" ] && [ -n "$l1" ] && [ -n "$l2f" ] || fail "reports without a loss"
echo "round 1: preempted at step $s1, loss $l0 -> $l1; round 2: first report at step $f2, loss $l2f"
[ "$f2" -gt "$s1" ] || fail "round 2 started over: first report at step $f2"
echo "$first2" | json_has - 'd["world_size"] == 3' || fail "round 2 world size: $first2"
echo "$first2" | json_has - 'd["local_bsz"] == 8' || fail "round 2 local batch: $first2"
echo "$first2" | json_has - 'd["accum_steps"] == 1' || fail "round 2 accumulation: $first2"
awk -v a="$l2f" -v b="$l0" -v c="$l1" 'BEGIN { exit !(a < 0.8 * b && a < 1.25 * c) }' ||
  fail "loss after resuming ($l2f) is not near where it stopped ($l1)"

# Same GPUs, only the batch changes (3 x 16, no accumulation): no restart. The workers keep
# their pids, take batch plan 1 at a step boundary and report the new local batch.
pids() { sr status -o json train | json_eval - 'values(d, "pids")[0]'; }
before=$(pids)
[ -n "$before" ] || fail "no pids for round 2"
sr apply $A -o table p2b.json >out 2>err || { cat out err; fail "apply p2b"; }
grep -q "train.*resize.*local_bsz 8 -> 16; accum_steps 1 -> 0" out ||
  { cat out; fail "p2b did not resize the job in place"; }
planned() { reports_of 2 | json_has - 'has(docs, reason="batch", plan=1)'; }
wait_for 90 "no report of batch plan 1" planned
after=$(pids)
[ "$before" = "$after" ] || fail "the workers were restarted by a batch change: $before -> $after"
planned=$(reports_of 2 | json_select - 'd["reason"] == "batch"' | tail -1)
echo "$planned" | json_has - 'd["local_bsz"] == 16 and d["accum_steps"] == 0' ||
  fail "batch plan report: $planned"
echo "round 2: batch changed in place (pids $after), $(echo "$planned" | field step) steps in"

# Preempted by an empty placement: checkpoint-stopped, state preempted.
sr apply $A -o table p3.json >out 2>err || { cat out err; fail "apply p3"; }
grep -q "train.*stop" out || { cat out; fail "p3 did not stop the job"; }
sr status -o table train | grep -q preempted || fail "not preempted after p3"
last2=$(reports_of 2 | tail -1)
s2=$(echo "$last2" | field step)
l2=$(reports_of 2 | tail -5 | loss_over -)
[ -n "$l2" ] || fail "round 2's last reports carry no loss"
echo "round 2: preempted at step $s2, loss $l2f -> $l2"
awk -v a="$l2" -v b="$l1" 'BEGIN { exit !(a < b) }' || fail "loss did not decrease ($l1 -> $l2)"
# Every rank's log holds its rounds; rank 0 both.
grep -q "round 1 rank 0/2" "$ST/jobs/train/logs/rank-0.log" || fail "rank 0 log lost round 1"
grep -q "round 2 rank 0/3" "$ST/jobs/train/logs/rank-0.log" || fail "rank 0 log lacks round 2"
grep -q "round 2 rank 2/3" "$ST/jobs/train/logs/rank-2.log" || fail "rank 2 log lacks round 2"

# Round 3: one replica on another GPU with an end in sight; `run` waits and exits 0.
jobs $((s2 + 50))
sr run $A -o table p4.json >out 2>err || { cat out err; fail "run p4 exited $?"; }
grep -q "finished" out || { cat out; fail "round 3 did not finish"; }
last3=$(reports_of 3 | tail -1)
[ "$(echo "$last3" | field step)" -eq $((s2 + 50)) ] || fail "round 3 ended at: $last3"
echo "round 3: finished at step $((s2 + 50))"
echo "ok"
