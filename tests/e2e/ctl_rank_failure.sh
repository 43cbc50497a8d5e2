#!/bin/sh
# A two-rank job whose rank 0 raises a Python exception while rank 1, having lost it,
# exits 69 first (as sia.torch's ranks do when a peer goes away), under `sia-ctl round`:
# status, explain and history blame rank 0 (exit 1), not rank 1's 69; explain shows the
# traceback's last line from rank 0's log; STEP shows the step the job reached (its last
# report, read after its node said it failed); `logs --follow` ends once its ranks ended,
# before any round saw it end. The job is a plain Python script (no PyTorch), so the
# order of the two exits is the script's, not a race's.
#   ctl_rank_failure.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/cpu_pair.sh"
PY=${SIA_PYTHON:-/usr/bin/python3}
ST=$tmp/state
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
at_exit '"$BIN/sia-run" --state-dir "$ST/nodes/t4-0" stop --grace 0 boom'
on_fail() { ctl status; }
logs "$ST/nodes/t4-0/jobs/boom/logs/rank-*.log" "$ST/nodes/t4-0/jobs/boom/supervisor.log"
t4_cluster cpu-one 1 2
cat >placement.json <<'JSON'
{"apiVersion": "sia/v1", "kind": "Placement", "data": {"jobs": [
  {"name": "boom", "gpu_type": "t4", "batch_size": 32, "local_bsz": 16, "accum_steps": 0,
   "nodes": [{"name": "t4-0", "gpus": [0, 1]}]}]}}
JSON
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
time_limit = 1
[stages]
place = "cat $tmp/placement.json"
[nodes]
apply = ["sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node", "{node}",
         "--cluster", "{cluster}", "--jobs", "{jobs}", "--grace", "20", "-o", "json", "-"]
TOML
# Rank 0 reports step 7 and notes the stop signal (as sia.torch's handler does); then
# rank 1 loses its peer and exits 69; once its supervisor has reaped rank 1, rank 0
# raises. Each waits for the other by polling files in DIR (train.py's argument).
cat >train.py <<'PY'
import json, os, signal, sys, time
ready, gone = os.path.join(sys.argv[1], "rank0.ready"), os.path.join(sys.argv[1], "rank1.pid")


def wait(cond):  # polled, bounded by the test's own time limits
    while not cond():
        time.sleep(0.05)


if os.environ["RANK"] == "1":
    wait(lambda: os.path.exists(ready))
    with open(gone + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(gone + ".tmp", gone)
    print("rank 1: a peer was lost", flush=True)
    sys.exit(69)
signal.signal(signal.SIGTERM, lambda *a: print("rank 0: stop noted", flush=True))
with open(os.environ["SIA_REPORT"], "a") as f:
    f.write(json.dumps({"type": "report", "job": os.environ["SIA_JOB"],
                        "round": int(os.environ["SIA_ROUND"]), "step": 7,
                        "progress": 7.0, "reason": "interval"}) + "\n")
for i in range(8):
    print(f"rank 0: step {i}", flush=True)
open(ready, "w").close()


def rank1_reaped():  # its supervisor has seen it end
    return os.path.exists(gone) and not os.path.exists("/proc/" + open(gone).read())


wait(rank1_reaped)
raise RuntimeError("the loss is NaN at step 7")
PY
cat >boom.toml <<TOML
name = "boom"
model = "cifar10"
max_gpus = 2
command = ["$PY", "$tmp/train.py", "$tmp"]
TOML
ctl submit boom.toml >/dev/null || fail "submit"
ctl -q round >round.log 2>&1 || fail "round: $(cat round.log)"
node_state() {
  "$BIN/sia-run" --state-dir "$ST/nodes/t4-0" status -o json boom 2>/dev/null |
    json_eval - '(values(d, "state") or [""])[0]' 2>/dev/null
}
boom_started() { [ -n "$(node_state)" ]; }
wait_for 30 "boom did not start" boom_started
# logs --follow ends when the ranks end: no round runs meanwhile.
timeout 60 "$BIN/sia-ctl" --config "$tmp/config.toml" logs --follow boom >follow.out 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "logs --follow did not end by itself ($rc): $(tail -3 follow.out)"
grep -q "RuntimeError: the loss is NaN at step 7" follow.out ||
  fail "logs --follow ended before the traceback: $(cat follow.out)"
[ "$(node_state)" = failed ] || fail "the node says $(node_state), not failed"
ctl -q round >round.log 2>&1 || fail "round: $(cat round.log)"
ctl -o json status boom >st.json || fail "status boom"
json_check "boom failed" st.json 'has(d, name="boom", state="failed")'
json_check "status blames rank 0" st.json \
  'match(d, "reason", "^failed on t4-0: rank 0 failed: exit status 1; rank 1 lost a peer")'
json_check "status's exit status is rank 0's" st.json 'has(d, name="boom", exit_status=1)'
json_check "status shows step 7" st.json 'has(d, name="boom", step=7)'
ctl status boom | grep -q "^boom .* 7 .*rank 0 failed" || fail "the table: $(ctl status boom)"
ex=$(ctl explain boom)
echo "$ex" | grep -q "rank 0 failed: exit status 1" || fail "explain: $ex"
echo "$ex" | grep -q "the last lines of rank 0's log on t4-0" || fail "explain has no rank 0 tail: $ex"
echo "$ex" | grep -q "| RuntimeError: the loss is NaN at step 7" || fail "explain lacks the traceback: $ex"
ctl -o json history >hist.json || fail "history"
json_check "history blames rank 0" hist.json 'match(d, "reason", "^failed on t4-0: rank 0 failed")'
echo "ok: rank 0's failure is blamed on rank 0 (step 7, exit 1), with its traceback"
