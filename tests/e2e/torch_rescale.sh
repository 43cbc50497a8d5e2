#!/bin/sh
# sia.torch under sia-run: the Adam example (examples/pytorch/adam_mlp_sia.py) runs as
# 2 replicas, is rescaled to 3 replicas with gradient accumulation, then to 1; each
# change checkpoint-stops it (exit 75) and restarts it restoring.  It resumes at the
# step where it stopped with the Adam state exact (the model and optimizer CRC rank 0
# logs at the save equals the one after the restore) and the loss where it was, and
# over the three rounds every sample of the epoch is seen exactly once.
#   torch_rescale.sh BIN_DIR SOURCE_DIR     (exit 77: no Python with torch)
. "$(dirname "$0")/lib/harness.sh"
need_torch
. "$E2E_LIB/losses.sh"
ST=$tmp/state
export SIA_DEVICE=cpu SIA_RENDEZVOUS_TIMEOUT=60 SIA_TORCH_DEBUG=1
sr() { "$BIN/sia-run" --state-dir "$ST" "$@"; }
at_exit sr stop --grace 0 train
on_fail() { sr status -o table; }
logs "$ST/jobs/train/logs/*.log"
R=$ST/jobs/train/reports.jsonl
LOG0=$ST/jobs/train/logs/rank-0.log
# field NAME: the value of a field of the report on stdin.
field() { json_get - ".$1"; }
# reports_of ROUND: the round's reports, one a line, in order.
reports_of() { [ -f "$R" ] && json_select "$R" "d.get('round') == $1" 2>/dev/null; }
# wait_reports ROUND N: until ROUND has sent N interval reports (bounded).
has_reports() { [ "$(reports_of "$1" | json_eval - 'count(docs, reason="interval")')" -ge "$2" ]; }
wait_reports() { wait_for 90 "round $1 did not send $2 reports" has_reports "$1" "$2"; }
# crc WHAT STEP: the state CRC rank 0 logged when it saved/restored at STEP.
crc() { sed -n "s/.*$1 step $2: model and optimizer state crc \([0-9a-f]*\).*/\1/p" "$LOG0" | tail -1; }

cat >cluster.toml <<'TOML'
name = "cpu-box"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 1
TOML
N=40000
cat >jobs.json <<JSON
{"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": [
 {"name": "train", "model": "mlp",
  "command": ["$PY", "$SRC/examples/pytorch/adam_mlp_sia.py", "--epochs", "1",
              "--dataset-size", "$N", "--record", "$tmp/ids"]}]}}
JSON
# placement FILE GPUS BATCH LOCAL ACCUM
placement() {
  printf '{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": [{"name": "train",
    "gpu_type": "t4", "nodes": [{"name": "t4-0", "gpus": [%s]}], "batch_size": %s,
    "local_bsz": %s, "accum_steps": %s}]}}\n' "$2" "$3" "$4" "$5" >"$1"
}
placement p1.json 0,1 32 16 0
placement p2.json 0,1,2 48 8 1
placement p3.json 3 32 32 0
A="--node t4-0 --cluster cluster.toml --jobs jobs.json --grace 30 --report-interval 0.2"

# restarted ROUND PREV: checks the round that followed PREV's preemption.
restarted() {
  last=$(reports_of "$2" | tail -1)
  [ "$(echo "$last" | field reason)" = preempted ] || fail "no final report in round $2: $last"
  s=$(echo "$last" | field step)
  # Losses over several reports each (lib/losses.sh).
  lp=$(reports_of "$2" | tail -4 | loss_over -)
  wait_reports "$1" 4
  first=$(reports_of "$1" | head -1)
  f=$(echo "$first" | field step)
  lf=$(reports_of "$1" | head -4 | loss_over -)
  [ -n "$lp" ] && [ -n "$lf" ] || fail "reports without a loss"
  echo "round $2: preempted at step $s (loss $lp); round $1: first report at step $f," \
    "then loss $lf"
  [ "$f" -ge "$s" ] || fail "round $1 started over: first report at step $f < $s"
  grep -q "restored step $s " "$LOG0" || fail "rank 0 did not log 'restored step $s'"
  saved=$(crc checkpoint "$s")
  loaded=$(crc restored "$s")
  [ -n "$saved" ] && [ "$saved" = "$loaded" ] ||
    fail "Adam state at step $s: saved crc '$saved', restored crc '$loaded'"
  awk -v a="$lf" -v b="$lp" 'BEGIN { exit !(a > 0.25 * b && a < 1.5 * b + 0.05) }' ||
    fail "loss after resuming ($lf) is not near where it stopped ($lp)"
}

sr apply $A -o table p1.json >out 2>err || { cat out err; fail "apply p1"; }
grep -q "train.*start" out || { cat out; fail "p1 did not start the job"; }
wait_reports 1 3
l0=$(reports_of 1 | head -3 | loss_over 0)

sr apply $A -o table p2.json >out 2>err || { cat out err; fail "apply p2"; }
grep -q "train.*restart" out || { cat out; fail "p2 did not restart the job"; }
restarted 2 1
echo "$first" | json_has - 'd["world_size"] == 3' || fail "round 2 world size: $first"
echo "$first" | json_has - 'd["local_bsz"] == 8' || fail "round 2 local batch: $first"
echo "$first" | json_has - 'd["accum_steps"] == 1' || fail "round 2 accumulation: $first"
wait_reports 2 6

sr run $A -o table p3.json >out 2>err || { cat out err; fail "run p3 exited $?"; }
grep -q "finished" out || { cat out; fail "round 3 did not finish"; }
restarted 3 2
done3=$(reports_of 3 | tail -1)
[ "$(echo "$done3" | field reason)" = done ] || fail "round 3 did not end done: $done3"
[ "$(echo "$done3" | field samples)" = "$N" ] || fail "round 3 did not end the epoch: $done3"
ld=$(reports_of 3 | tail -4 | loss_over -)
[ -n "$l0" ] && [ -n "$ld" ] || fail "reports without a loss"
awk -v a="$ld" -v b="$l0" 'BEGIN { exit !(a < 0.8 * b) }' || fail "loss did not fall ($l0 -> $ld)"
# Every sample of the epoch exactly once, across the three world sizes.
seen=$(sort -n "$tmp/ids" | uniq | wc -l)
twice=$(sort -n "$tmp/ids" | uniq -d | wc -l)
[ "$seen" -eq "$N" ] && [ "$twice" -eq 0 ] ||
  fail "$seen distinct samples of $N seen, $twice more than once"
echo "ok: $N samples exactly once; loss $l0 -> $ld"
