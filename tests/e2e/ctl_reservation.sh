#!/bin/sh
# Reservations (issue 34) in the live cron-style controller on the CPU (`sia-ctl round`
# from a shell loop, the default local node commands, the reference worker; see
# ctl_cron_rounds.sh), on two nodes of two T4s: controller.reservations names a file whose
# reservation owns one node's GPUs and lends them. Four one-GPU jobs fill the cluster with
# a step limit far beyond reach; the test then grows the reservation (the file rewritten
# mid-run) and the next round takes one node back: the jobs on it stop by checkpoint-stop
# (preempted, exit 75, on that node) and resume elsewhere from their checkpoints, nothing
# runs on the reserved node from then on, and every job ends at the step limit the test
# sets (read by each worker as it starts: the taken-back jobs read it as they resume, the
# two others as a requeue restarts them); `sia-ctl nodes` shows the node reserved. A bad
# reservations file ends a round with one line and status 78, the state unchanged.
# Before all that, admission (a state directory of its own): with the reservation to hold
# its node in half an hour, one guaranteed job that needs two T4s for the hour is admitted
# and a second is refused with one line saying what the reservation holds.
#   ctl_reservation.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
. "$E2E_LIB/cpu_pair.sh"
at_exit cpu_pair_stop j1 j2 j3 j4
on_fail() {
  ctl status
  for n in t4-0 t4-1; do "$BIN/sia-run" --state-dir "$ST/nodes/$n" status 2>&1; done
}
logs "$ST/nodes/*/jobs/*/supervisor.log" "$ST/nodes/*/jobs/*/logs/rank-0.log"

cpu_pair_setup
sed -i '/^\[controller\]/a reservations = "reservations.toml"' config.toml
# reserve HELD: the reservation owns 2 t4 GPUs (one node) and holds HELD of them.
reserve() {
  cat >reservations.toml.new <<TOML
[[reservation]]
gpu_type = "t4"
gpus = 2
steps = [{at = 0, gpus = $1}]
TOML
  mv reservations.toml.new reservations.toml
}

# Admission counts the GPUs the reservation holds before the deadline.
cat >reservations.toml <<TOML
[[reservation]]
gpu_type = "t4"
gpus = 2
steps = [{at = 0, gpus = 0}, {at = $(($(date +%s) + 1800)), gpus = 2}]
TOML
for g in g1 g2; do
  printf 'name = "%s"\nmodel = "cifar10"\nmax_gpus = 2\ncommand = ["/bin/true"]\n' "$g" >"$g.toml"
done
admit() { ctl --state-dir "$tmp/admission" submit --class guaranteed --deadline 1h "$1.toml"; }
admit g1 >out 2>&1 || { cat out; fail "g1 refused with half the GPUs free for the hour"; }
admit g2 >out 2>&1
rc=$?
[ "$rc" -eq 65 ] || { cat out; fail "g2 exited $rc, not 65"; }
[ "$(wc -l <out)" -eq 1 ] || { cat out; fail "g2's refusal: not one line"; }
grep -q "g2: deadline: .*; reservations hold 2 of its 4 t4 GPUs before then" out ||
  fail "g2's refusal does not say what the reservation holds: $(cat out)"
echo "admission: g1 admitted, g2 refused: $(cat out)"

reserve 0
echo 100000000 >steps # beyond reach until the test sets the limit
for j in j1 j2 j3 j4; do
  cat >"$j.toml" <<TOML
name = "$j"
model = "cifar10"
max_gpus = 1
command = ["sh", "-c", 'exec "\$0" --device cpu --steps "\$(cat "\$1")"', "$BIN/sia-worker", "$tmp/steps"]
TOML
  ctl submit "$j.toml" >out 2>&1 || { cat out; fail "submit $j"; }
done

i=0
# round: one round (its result in round-N.json) and the status after it (status.json).
round() {
  i=$((i + 1))
  ctl -o json round >"round-$i.json" 2>"round-$i.err" ||
    { cat "round-$i.err"; fail "round $i exited $?"; }
  ctl -o json status >status.json || fail "status"
}
# run_status NODE: that node's sia-run status (run-NODE.json).
run_status() { "$BIN/sia-run" --state-dir "$ST/nodes/$1" status -o json >"run-$1.json" 2>/dev/null; }
all_training() {
  round
  [ "$(json_eval status.json 'len([j for j in d["data"]["jobs"] if j["state"] == "running" and (j["step"] or 0) >= 5])')" -eq 4 ]
}
wait_for 300 "the four jobs training, each past step 5" all_training
json_check "the reservation reserves nothing while it lends" "round-$i.json" 'd["data"]["reserved"] == []'

# A bad file: one line, 78, the state unchanged.
cp reservations.toml good.toml
printf '[[reservation]]\ngpu_type = "v100"\ngpus = 2\n' >reservations.toml
before=$(json_get status.json .data.round)
ctl round >out 2>&1
rc=$?
[ "$rc" -eq 78 ] || { cat out; fail "a round with a bad reservations file exited $rc, not 78"; }
[ "$(wc -l <out)" -eq 1 ] || { cat out; fail "a bad reservations file: not one line"; }
grep -q "reservations.toml: reservation\[0\].gpu_type" out || fail "the line names no field: $(cat out)"
ctl -o json status >status.json || fail "status"
[ "$(json_get status.json .data.round)" = "$before" ] || fail "the failed round changed the state"
mv good.toml reservations.toml

# The limit: well past every job's step, at the pace they train (the resumed ones read it).
t0=$(date +%s)
s0=$(json_eval status.json 'max((j["step"] or 0) for j in d["data"]["jobs"])')
round
s1=$(json_eval status.json 'max((j["step"] or 0) for j in d["data"]["jobs"])')
dt=$(($(date +%s) - t0 + 1))
limit=$((s1 + 200 + (s1 - s0) * 20 / dt))
echo "$limit" >steps
echo "jobs at step $s1 (+$((s1 - s0)) in $dt s): the limit is $limit"

# Grow the reservation: one node taken back.
reserve 2
round
json_check "one node reserved" "round-$i.json" 'len(d["data"]["reserved"]) == 1'
R=$(json_get "round-$i.json" '.data.reserved[0]')
json_check "$R taken back from two jobs" "round-$i.json" \
  'len(d["data"]["taken_back"]) == 1 and len(d["data"]["taken_back"][0]["jobs"]) == 2'
taken=$(json_eval "round-$i.json" '" ".join(d["data"]["taken_back"][0]["jobs"])')
[ "$R" = t4-0 ] && O=t4-1 || O=t4-0
echo "reserved $R, taken back from $taken"
ctl -o json nodes >nodes.json || fail "nodes"
json_check "nodes shows $R reserved and $O not" nodes.json \
  "[n['reserved'] for n in sorted(d['data']['nodes'], key=lambda n: n['name'] != '$R')] == [True, False]"
ctl nodes | grep -q "^$R .*, reserved" || fail "the nodes table does not say $R is reserved: $(ctl nodes)"

# The taken-back jobs stop on R by checkpoint-stop (preempted, 75).
stopped_on_r() {
  run_status "$R" || return 1
  for j in $taken; do
    json_has "run-$R.json" "has(d, name=\"$j\", state=\"preempted\", exit_status=75)" || return 1
  done
}
wait_for 120 "the jobs on $R preempted with exit status 75" stopped_on_r
# The two others restart with the limit.
others=$(json_eval status.json '" ".join(sorted(j["name"] for j in d["data"]["jobs"] if j["nodes"] and j["nodes"][0]["name"] != "'"$R"'"))')
ctl requeue $others >out 2>&1 || { cat out; fail "requeue $others"; }

# Until every job has finished: nothing placed on R, nothing running there.
nothing_on_r() {
  json_has status.json "has(d, name=\"$R\")" &&
    fail "a job placed on reserved $R (round $i: reserved $(json_get "round-$i.json" .data.reserved))"
  run_status "$R" || fail "sia-run status on $R"
  json_has "run-$R.json" 'has(d, state="running") or has(d, state="stopping")' &&
    [ "$(json_eval "run-$R.json" 'len([j for j in d["data"]["jobs"] if j["state"] in ("running", "stopping")])')" -gt 0 ] &&
    fail "a job runs on reserved $R (round $i)"
  return 0
}
all_finished() {
  round
  nothing_on_r
  [ "$(json_eval status.json 'count(d, state="finished")')" -eq 4 ]
}
wait_for 500 "every job finished" all_finished
echo "all four finished after $i rounds"

run_status "$O" || fail "sia-run status on $O"
"$E2E_PY" - status.json "run-$O.json" "$limit" $taken <<'PY' || fail "the jobs' ends"
import json, sys
status, run, limit, taken = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
jobs = {j["name"]: j for j in json.load(open(status))["data"]["jobs"]}
for name, j in jobs.items():
    if j["state"] != "finished" or j["step"] != limit:
        sys.exit("%s: %s at step %s, not finished at %d" % (name, j["state"], j["step"], limit))
    if j["restarts"] < 1:
        sys.exit("%s never restarted" % name)
ran = {j["name"]: j for j in json.load(open(run))["data"]["jobs"]}
for name in taken:
    if name not in ran or ran[name].get("restore") != "restored":
        sys.exit("%s did not resume from its checkpoint on the other node: %s" % (name, ran.get(name)))
print("every job finished at step %d; %s resumed from their checkpoints" % (limit, " and ".join(taken)))
PY
echo "ok"
