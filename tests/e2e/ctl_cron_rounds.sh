#!/bin/sh
# The cron-style controller on the CPU: `sia-ctl round` run from a shell loop, with the
# default local node commands (one sia-run state directory per node under STATE/nodes)
# and the reference worker, drives three jobs submitted at different times to completion.
# Checks: every job finishes, exactly once (one "ended" in all the rounds' output, in no
# placement after that round), jobs are rescaled as others arrive (some job held more than
# one GPU count, some job restarted), each job's workers reached exactly their step limit,
# status/nodes/explain answer, and a second round while the lock is held exits 75.
# A fourth job fails at once (exit 3): explain shows the tail of its failing rank's log,
# and `sia-ctl logs` prints a rank's log (--tail, --follow ended by SIGTERM, refusals).
#   ctl_cron_rounds.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
. "$E2E_LIB/cpu_pair.sh"
. "$E2E_LIB/job_history.sh"
at_exit cpu_pair_stop a b c f
on_fail() {
  ctl status
  ctl nodes
}
logs "$ST/nodes/*/jobs/*/supervisor.log" "$ST/nodes/*/jobs/*/logs/rank-0.log"

cpu_pair_setup
STEPS=4000
job() {
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = 2
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "$STEPS"]
TOML
}
job a
job b
job c
cp "$SRC/tests/data/job-fails.toml" f.toml

ctl config | grep -q "controller.cluster .*$tmp/cluster.toml .*$tmp/config.toml" ||
  fail "sia-ctl config does not show the cluster's source"
ctl submit a.toml >out 2>&1 || { cat out; fail "submit a"; }
grep -q "a .*submitted" out || { cat out; fail "submit a: $(cat out)"; }
ctl submit a.toml >out 2>&1
[ $? -eq 65 ] || { cat out; fail "a second submit of a was not refused with 65"; }
ctl submit f.toml >/dev/null || fail "submit f"
ctl logs f >out 2>&1
[ $? -eq 66 ] || { cat out; fail "logs of a job not started yet did not exit 66"; }

start=$(date +%s)
i=0
while :; do
  i=$((i + 1))
  [ "$i" -eq 4 ] && { ctl submit b.toml >/dev/null || fail "submit b"; }
  [ "$i" -eq 8 ] && { ctl submit c.toml >/dev/null || fail "submit c"; }
  ctl -o json round >"round-$i.json" 2>"round-$i.err" ||
    { cat "round-$i.err"; fail "round $i exited $?"; }
  if [ "$i" -eq 5 ]; then
    # Following a running job's log: what is there, then until SIGTERM, which exits 0.
    timeout --preserve-status -s TERM 3 "$BIN/sia-ctl" --config "$tmp/config.toml" \
      logs a --follow >follow.out 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || { cat follow.out; fail "logs --follow ended by SIGTERM exited $rc"; }
    [ -s follow.out ] || fail "logs --follow of a running job printed nothing"
  fi
  if [ "$i" -eq 6 ]; then
    # A concurrent round while another process holds the lock: 75.
    sh -c 'exec 9>>"$1" && flock 9 && exec sleep 60' sh "$ST/lock" &
    locker=$!
    started "$locker"
    lock_held() { ! flock -n "$ST/lock" true; }
    wait_for 30 "the locking process did not take the lock" lock_held
    ctl round >out 2>&1
    rc=$?
    kill "$locker"
    wait "$locker" 2>/dev/null
    [ "$rc" -eq 75 ] || { cat out; fail "a round under a held lock exited $rc, not 75"; }
    grep -q "round lock held" out || { cat out; fail "no lock message: $(cat out)"; }
  fi
  done_jobs=$(ctl -o json status | json_eval - 'count(d, state="finished")')
  [ "$done_jobs" -eq 3 ] && break
  [ $(($(date +%s) - start)) -gt 110 ] && fail "not finished after 110 s ($i rounds)"
  sleep 0.5  # the rounds' pace (a poll: the loop ends on the jobs' states)
done
echo "all three jobs finished after $i rounds, $(($(date +%s) - start)) s"

# Exactly once: one "ended" record (a job, a reason, finished) per job in all the rounds'
# output, and no placement after that round names it.
"$E2E_PY" - "$ST" "$E2E_LIB" <<'PY' || fail "the jobs' ends"
import glob, json, re, sys
st = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from jsonq import find
ended = {}  # job -> the rounds whose output says it ended
for f in glob.glob("round-*.json"):
    r = int(re.search(r"round-(\d+)", f).group(1))
    for o in find(json.load(open(f)), state="finished"):
        if "job" in o and "reason" in o:
            ended.setdefault(o["job"], []).append(r)
if any(len(ended.get(j, [])) != 1 for j in "abc"):
    sys.exit("jobs ended other than once: %s" % {j: ended.get(j, []) for j in "abc"})
for f in glob.glob(st + "/rounds/r*-placement.json"):
    r = int(re.search(r"/r0*(\d+)-placement", f).group(1))
    for job in json.load(open(f))["data"]["jobs"]:
        if job["name"] in ended and r > ended[job["name"]][0]:
            sys.exit("job %s placed in round %d after it ended in round %d" %
                     (job["name"], r, ended[job["name"]][0]))
PY
# The workers ran to their step limit and not beyond.
for j in a b c; do
  max=$(max_step "$ST"/nodes/*/jobs/$j/reports.jsonl)
  [ "$max" = "$STEPS" ] || fail "job $j reached step $max, not $STEPS"
done
# Rescaled as others arrived: some job held 1 and 2 GPUs, and some job restarted.
rescaled=0
for j in a b c; do
  counts=$(gpu_counts "$j" "$ST"/rounds/r*-placement.json)
  [ "$counts" -gt 1 ] && rescaled=$((rescaled + 1))
done
[ "$rescaled" -ge 1 ] || fail "no job was rescaled"
restarts=$(ctl -o json status | json_eval - 'max(values(d, "restarts"))')
[ "$restarts" -ge 1 ] || fail "no job restarted"
echo "rescaled jobs: $rescaled; most restarts of one job: $restarts"

ctl status >out || fail "status"
[ "$(grep -c ' finished ' out)" -eq 3 ] || { cat out; fail "status table"; }
ctl nodes >out || fail "nodes"
grep -q "t4-1 .* up" out || { cat out; fail "nodes table"; }
ctl explain a >out || fail "explain"
grep -q "finished" out || { cat out; fail "explain a"; }
ctl explain nosuch >out 2>&1
[ $? -eq 66 ] || { cat out; fail "explain of an unknown job did not exit 66"; }

# The failed job: explain shows its failing rank's log tail; logs prints its log.
ctl -o json status f | json_has - 'has(d, name="f", state="failed")' || fail "job f did not fail"
ctl explain f >out || fail "explain f"
grep -q "the last lines of rank 0's log on t4-" out || { cat out; fail "explain f: no log tail"; }
grep -q "| boom" out || { cat out; fail "explain f: the tail lacks the error line"; }
ctl logs f >out || fail "logs f"
grep -q "^starting$" out && grep -q "^boom$" out || { cat out; fail "logs f: $(cat out)"; }
# The last line is sia-run's own: how the rank ended.
[ "$(ctl logs f --tail 2 | head -1)" = "boom" ] || fail "logs f --tail 2: $(ctl logs f --tail 2)"
ctl logs f --tail 1 | grep -q "^sia-run: rank 0 (pid [0-9]*) ended: exit status 3$" ||
  fail "logs f --tail 1: $(ctl logs f --tail 1)"
timeout 20 "$BIN/sia-ctl" --config "$tmp/config.toml" logs f --follow >out ||
  fail "logs --follow of an ended job did not exit 0 at once"
grep -q "^boom$" out || fail "logs --follow f: $(cat out)"
ctl logs a >out || fail "logs a"
grep -q "^==== sia-run: .* job a round [0-9]* rank 0/" out || { cat out; fail "logs a: no header"; }
ctl logs a --tail 1 >out || fail "logs a --tail 1"
[ "$(wc -l <out)" -eq 1 ] || { cat out; fail "logs a --tail 1 printed $(wc -l <out) lines"; }
ctl -o json logs a --tail 1 | json_has - 'd["kind"] == "JobLog"' || fail "logs -o json: no JobLog"
ctl logs a --rank 2 >out 2>&1
[ $? -eq 64 ] || { cat out; fail "logs of a rank out of range did not exit 64"; }
grep -q "rank 2 is out of range" out || fail "logs --rank 2: $(cat out)"
ctl logs nosuch >out 2>&1
[ $? -eq 66 ] || { cat out; fail "logs of an unknown job did not exit 66"; }
echo "ok"
