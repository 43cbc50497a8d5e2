#!/bin/sh
# A hyper-parameter search in the live controller: `sia-ctl round` run from a shell loop
# with the default local node commands and the reference worker. App "s" (four trials of
# the reference worker, one learning rate each, successive halving with eta 2 over three
# phases: budgets 1/4, 1/2, 1 of 2400 steps) and app "c" (two long trials, no scheduler).
# Checks: each trial stops at its rung (its workers exit at exactly the budget's step) and
# is not started again there (sia-run leaves a trial that stopped at its rung), the
# trials stopped at each rung are the ones with the worse loss reported there, the stopped
# ones end as "stopped" with the reason, the app ends (finished) when its survivor does,
# status shows the apps (table and JSON, `status APP`), `cancel c` cancels both trials of
# the second app, and sia-ctl fsck accepts the state directory.
#   ctl_app_search.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
. "$E2E_LIB/cpu_pair.sh"
at_exit cpu_pair_stop s-000 s-001 s-002 s-003 c-000 c-001
on_fail() { ctl status; }
logs "$ST/nodes/*/jobs/*/logs/rank-0.log"

cpu_pair_setup
STEPS=2400
cpu_pair_search s "[\"$BIN/sia-worker\", \"--device\", \"cpu\", \"--steps\", \"$STEPS\", \"--lr\", \"{lr}\"]" \
  "[0.0005, 0.02, 0.001, 0.004]"
cat >long.toml <<TOML
kind = "App"
name = "c"
[template]
model = "cifar10"
max_gpus = 1
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "100000000"]
[hparams.grid]
lr = [0.01, 0.02]
TOML

ctl submit search.toml >out 2>&1 || { cat out; fail "submit the search"; }
grep -q "s-003 .*submitted" out || fail "submit did not list the trials: $(cat out)"
ctl submit search.toml >out 2>&1
[ $? -eq 65 ] || fail "a second submit of app s was not refused with 65: $(cat out)"
ctl submit long.toml >/dev/null 2>&1 || fail "submit app c"

status_json() { ctl -o json status >status.json 2>status.err || fail "status: $(cat status.err)"; }
app_field() { # APP FIELD: a field of the app's row
  json_eval status.json "[a for a in d['data']['apps'] if a['name'] == '$1'][0]['$2']"
}

start=$(date +%s)
i=0
while :; do
  i=$((i + 1))
  ctl -o json round >"round-$i.json" 2>"round-$i.err" ||
    { cat "round-$i.err"; fail "round $i exited $?"; }
  if [ "$i" -eq 2 ]; then
    ctl cancel c >out 2>&1 || fail "cancel c: $(cat out)"
  fi
  status_json
  if [ "$i" -eq 1 ]; then  # a running app has its estimated rho, not a measured one
    json_check "round 1: app s's rho is estimated" status.json "$(cat <<'PY'
([isinstance(s["rho"], float) and s["rho"] > 0 and not s["rho_measured"]
  and s["fair"]["n_avg"] >= 1 and s["fair"]["t_id"] > 0
  for s in d["data"]["apps"] if s["name"] == "s"] == [True]
 and d["data"]["fairness"]["apps"]["count"] >= 1)
PY
)"
  fi
  [ "$(app_field s state)" = finished ] && break
  [ $(($(date +%s) - start)) -gt 50 ] && fail "app s not finished after 50 s ($i rounds)"
  sleep 0.3  # the rounds' pace (a poll: the loop ends on the app's state)
done
echo "app s finished after $i rounds, $(($(date +%s) - start)) s"

python3 - "$ST" "$STEPS" "$E2E_LIB" <<'PY' || fail "the search's trials"
import json, re, sys
st, steps = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from app_trials import check, reports, rungs
status = json.load(open("status.json"))["data"]
jobs = {j["name"]: j for j in status["jobs"]}
app = [a for a in status["apps"] if a["name"] == "s"][0]
trials = ["s-000", "s-001", "s-002", "s-003"]
reports = reports(st)
rung = rungs(reports, trials)
check(sorted(rung) == [0.25, 0.5], "rung reports at fractions %s" % sorted(rung))
check(all(s == steps // 4 for s, _ in rung[0.25].values()), "rung 1 steps %s" % rung[0.25])
check(all(s == steps // 2 for s, _ in rung[0.5].values()), "rung 2 steps %s" % rung[0.5])
stopped = sorted(t for t in trials if jobs[t]["state"] == "stopped")
finished = [t for t in trials if jobs[t]["state"] == "finished"]
check(len(stopped) == 3 and len(finished) == 1, "states %s" % {t: jobs[t]["state"] for t in trials})
# At each rung, the trials stopped there had a worse loss than every one that went on.
for frac, phase in ((0.25, 1), (0.5, 2)):
    out = [t for t in stopped if "phase %d of 3" % phase in jobs[t]["reason"]]
    on = [t for t in rung[frac] if t not in out]
    check(len(out) == {1: 2, 2: 1}[phase], "phase %d stopped %s" % (phase, out))
    for t in out:
        check(re.match(r"successive halving: phase %d of 3, loss [0-9.e-]+ ranked" % phase,
                       jobs[t]["reason"]), "reason of %s: %s" % (t, jobs[t]["reason"]))
        for u in on:
            check(rung[frac][t][1] >= rung[frac][u][1],
                  "phase %d: %s (loss %g) stopped, %s (loss %g) went on" %
                  (phase, t, rung[frac][t][1], u, rung[frac][u][1]))
# The survivor trained to the end; the app's row says so.
last = max(r["step"] for r in reports[finished[0]])
check(last == steps, "the survivor reached step %d, not %d" % (last, steps))
check(app["phase"] == 3 and app["stopped"] == 3 and app["finished"] == 1 and app["live"] == 0,
      "app row %s" % app)
check(app["best_trial"] is not None and app["scheduler"] == "successive-halving", "app row %s" % app)
# The cancelled app.
c = [a for a in status["apps"] if a["name"] == "c"][0]
check(c["state"] == "cancelled" and c["cancelled"] == 2, "app c %s" % c)
check(jobs["c-000"]["state"] == "cancelled" and jobs["c-001"]["state"] == "cancelled", "c trials")
# Finish-time fairness, live: the ended app's and its survivor's rho are measured (their
# real completion time over the ideal one estimated from the rounds); stopped trials and
# cancelled apps have none; the summary covers what has one.
check(isinstance(app["rho"], float) and app["rho"] > 0 and app["rho_measured"], "app s rho %s" % app)
f = jobs[finished[0]]
check(isinstance(f["rho"], float) and f["rho"] > 0 and f["rho_measured"], "survivor rho %s" % f)
check(all(jobs[t]["rho"] is None for t in stopped), "stopped trials have a rho")
check(c["rho"] is None, "cancelled app c has a rho: %s" % c)
summary = status["fairness"]
check(summary["apps"]["count"] == 1 and summary["apps"]["worst_rho"] == app["rho"], summary)
check(summary["jobs"]["count"] == 1 and summary["jobs"]["worst_rho"] == f["rho"], summary)
print("app s: rho %.2f (N_avg %.2f); its survivor %s: rho %.2f" %
      (app["rho"], app["fair"]["n_avg"], finished[0], f["rho"]))
PY

ctl status >out 2>&1 || fail "status"
grep -q "^s .*finished .*successive-halving .*3 of 3" out || fail "status table: $(cat out)"
grep -q "^s-00[0-3] .*stopped .*successive halving: phase 1 of 3" out ||
  fail "status table, stopped trials: $(cat out)"
grep -q "^fairness: jobs worst rho [0-9.]*, [01] of 1 unfair; apps worst rho [0-9.]*, [01] of 1 unfair" out ||
  fail "status table, fairness line: $(cat out)"
ctl status s >out 2>&1 || fail "status s"
[ "$(grep -c '^s-00' out)" -eq 4 ] || fail "status s lists the trials: $(cat out)"
grep -q "^c " out && fail "status s shows app c: $(cat out)"
ctl status --state stopped >out 2>&1 || fail "status --state stopped"
[ "$(grep -c '^s-00' out)" -eq 3 ] || fail "status --state stopped: $(cat out)"
ctl fsck >out 2>&1 || fail "fsck of the state directory: $(cat out)"
echo "PASS"
