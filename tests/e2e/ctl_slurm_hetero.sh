#!/bin/sh
# A heterogeneous Slurm job: cron rounds (`sia-ctl round` from a shell loop) through a real
# Slurm (lib/slurm.sh: two emulated a100 nodes of 2 GPUs, [slurm] enabled), sia's own
# estimate and solve stages and a [stages] place script of the test's own that puts job h
# (max_gpus 3, the reference worker on the CPU) on n1 with 2 GPUs and n2 with 1 whenever
# the allocation gives h GPUs -- a shape sia's placer never makes:
#   - Slurm runs each generation as one heterogeneous job (scontrol: two components of one
#     HetJobId, offsets 0 and 1, on n1 with gpu:a100:2 and n2 with gpu:a100:1; squeue
#     lists them as ID+0 and ID+1);
#   - every generation's ranks say world size 3, ranks 0, 1 and 2 each once;
#   - h is held once it trained (checkpoint-stopped: Slurm's job ends) and released: the
#     next generation resumes from its checkpoint (its rank 0 says "restored step N",
#     N > 0), and h ends exactly at its step limit; it runs exactly these two generations
#     (sia's solve keeps it where the place stage put it: no restart of its own);
#   - from the workers' own timeline (lib/timeline.sh), no two generations of h overlap.
# Skips (77) without root, slurm-wlm or munge.
#   ctl_slurm_hetero.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/slurm.sh"
. "$E2E_LIB/job_history.sh"
. "$E2E_LIB/timeline.sh"
slurm_bed n1:a100:2 n2:a100:2
ST=$tmp/state
SH=$tmp/shared
export SIA_RENDEZVOUS_TIMEOUT=60
# The place stage: h on n1 (GPUs 0, 1) and n2 (GPU 0) with the allocation's batch, when
# the allocation gives it a configuration; nothing else placed. A restart unless the
# previous placement ({previous}: absent in the first round) had h so already.
cat >place.py <<'PY'
import json, sys
alloc = json.loads(sys.stdin.read())["data"]
shape = [{"name": "n1", "gpus": [0, 1]}, {"name": "n2", "gpus": [0]}]
before = []
if len(sys.argv) > 1:
    with open(sys.argv[1]) as f:
        before = [j["nodes"] for j in json.load(f)["data"]["jobs"] if j["name"] == "h"]
jobs = [{"name": "h", "gpu_type": "a100", "nodes": shape, "restart": before != [shape],
         "batch_size": float(3 * j["local_bsz"]), "local_bsz": j["local_bsz"],
         "accum_steps": j.get("accum_steps", 0)}
        for j in alloc["jobs"] if j["name"] == "h" and j.get("config")]
print(json.dumps({"apiVersion": "sia/v1", "kind": "Placement",
                  "metadata": {"generator": "ctl_slurm_hetero.sh"},
                  "data": {"jobs": jobs, "evicted": [], "waiting": []}}))
PY
cat >config.toml <<TOML
[controller]
state_dir = "$ST"
cluster = "$tmp/cluster.toml"
retention = 500
time_limit = 1
[stages]
place = "$E2E_PY $tmp/place.py {previous}"
TOML
slurm_sia_section "$SH" >>config.toml
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
on_fail() {
  ctl status
  squeue -o "%i %j %u %T %N %b"
  echo "--- events"
  tail -n 12 "$tmp/events.log"
}
logs "$SH/nodes/*/jobs/*/logs/rank-*.log" "$SH/slurm/*/slurm-*.out"
ctl slurm-cluster --write cluster.toml || fail "slurm-cluster"
timeline_wrapper "$tmp/wrap.sh" "$tmp/events.log"
STEPS=2000
cat >h.toml <<TOML
name = "h"
model = "cifar10"
max_gpus = 3
command = ["$tmp/wrap.sh", "$BIN/sia-worker", "--device", "cpu", "--steps", "$STEPS"]
TOML
ctl submit h.toml >/dev/null || fail "submit h"

i=0
start=$(date +%s)
# round: one cron round, its output kept.
round() {
  i=$((i + 1))
  ctl -o json round >"round-$i.json" 2>"round-$i.err" && return
  _r_st=$?
  cat "round-$i.err"
  fail "round $i exited $_r_st"
}
# rounds_until SECONDS WHAT COMMAND...: a round a second until COMMAND succeeds.
rounds_until() {
  _ru_end=$(($(date +%s) + $1))
  _ru_what=$2
  shift 2
  until round && "$@"; do
    [ "$(date +%s)" -ge "$_ru_end" ] && fail "after $i rounds: $_ru_what"
    sleep 1  # the rounds' pace (a poll: the loop ends on the condition)
  done
}
trained() { [ "$(max_step "$SH"/nodes/*/jobs/h/reports.jsonl)" -gt 200 ] 2>/dev/null; }
# h's Slurm job while it runs: its components as scontrol and squeue list them.
running_het() {
  scontrol -o show job >jobs.txt 2>/dev/null && squeue -h -o '%i %j %T %N %b' >queue.txt &&
    [ "$(grep -c '^[0-9]*+[01] sia\.h\.[0-9]* RUNNING ' queue.txt)" -eq 2 ]
}
het_trained() { running_het && trained; }
rounds_until 150 "h never trained in a heterogeneous Slurm job" het_trained
echo "h trains in a heterogeneous Slurm job after $i rounds, $(($(date +%s) - start)) s:"
cat queue.txt
# Slurm's own view: one HetJobId, offsets 0 and 1, the GPUs per node the place stage gave.
"$E2E_PY" - jobs.txt <<'PY' || fail "h's Slurm job is not heterogeneous as placed: $(grep sia.h jobs.txt)"
import re, sys
comps = {}
for line in open(sys.argv[1]):
    if "JobName=sia.h." not in line or "JobState=RUNNING" not in line:
        continue
    f = dict(re.findall(r"(\w+)=(\S*)", line))
    comps[int(f["HetJobOffset"])] = (f["HetJobId"], f["NodeList"], f.get("TresPerNode", ""))
assert sorted(comps) == [0, 1], comps
assert comps[0][0] == comps[1][0], comps
assert comps[0][1:] == ("n1", "gres:gpu:a100:2") and comps[1][1:] == ("n2", "gres:gpu:a100:1"), comps
print("Slurm: HetJobId %s: %s" % (comps[0][0], comps))
PY
# An operator's preemption: h held (its Slurm job checkpoint-stopped), then released.
ctl hold h >/dev/null || fail "hold h"
gone() { ! squeue -h -o %j | grep -q '^sia\.h\.'; }
rounds_until 120 "h still in Slurm after the hold" gone
ctl release h >/dev/null || fail "release h"
echo "h held and released after $i rounds, $(($(date +%s) - start)) s"
finished() { [ "$(job_state h)" = finished ]; }
rounds_until 180 "h not finished" finished
echo "h finished after $i rounds, $(($(date +%s) - start)) s"

timeline_check events.log
ctl -o json status >status.json || fail "status"
steps_check status.json "$STEPS" "$SH/nodes/*/jobs/%s/reports.jsonl" h
json_check "status: h finished at step $STEPS" status.json \
  "[(j['state'], j['step']) for j in d['data']['jobs']] == [('finished', $STEPS)]"
# Every generation: world size 3, ranks 0, 1, 2 each once; each after the first resumed.
"$E2E_PY" - "$SH" <<'PY' || fail "h's generations"
import glob, re, sys
sh = sys.argv[1]
ranks, restored = {}, {}  # generation -> [(rank, world)]; generation -> rank 0's restored step
for f in glob.glob(sh + "/nodes/*/jobs/h/logs/rank-*.log"):
    gen = None
    for line in open(f, errors="replace"):
        m = re.match(r"==== sia-run: .* job h round (\d+) rank (\d+)/(\d+) ", line)
        if m:
            gen, rank = int(m.group(1)), int(m.group(2))
            ranks.setdefault(gen, []).append((rank, int(m.group(3))))
            continue
        m = re.search(r"restored step (\d+)", line)
        if m and gen is not None and rank == 0 and gen not in restored:
            restored[gen] = int(m.group(1))
# Two: the first, and the one after the hold. Sia's solver keeps h where the place stage
# put it (the estimator values that configuration, off its set): no other restart.
if len(ranks) != 2:
    sys.exit("h ran %d generations, expected 2 (start, release): %s" % (len(ranks), sorted(ranks)))
bad = {g: r for g, r in ranks.items() if sorted(r) != [(0, 3), (1, 3), (2, 3)]}
if bad:
    sys.exit("generations without ranks 0..2 of world size 3, each once: %s" % bad)
first = min(ranks)
if restored.get(first) or any(not restored.get(g) for g in ranks if g != first):
    sys.exit("generations not resumed from a checkpoint: %s of %s" % (restored, sorted(ranks)))
print("h's generations", sorted(ranks), "ranks 0..2 of 3 each; restored steps", restored)
PY
echo "ok"
