#!/bin/sh
# A hyper-parameter search of PyTorch trials (sia.torch, tests/python/scenario.py) in the
# live controller: `sia-ctl round` from a shell loop with the default local node commands.
# App "t": four trials, one learning rate each, successive halving with eta 2 over three
# phases (budgets 1/4, 1/2, 1 of 96 steps). Checks: every trial's sia.torch workers stop
# at exactly its rung's step with a "rung" report that carries the loss and the fraction,
# none is started again at a rung it reached, the trials stopped at each rung are the
# ones with the worse loss there, and the survivor resumes from its rung's checkpoint and
# trains to exactly its last step.
#   ctl_torch_app.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
need_torch
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
. "$E2E_LIB/cpu_pair.sh"
at_exit cpu_pair_stop t-000 t-001 t-002 t-003
on_fail() { ctl status; }
logs "$ST/nodes/*/jobs/*/logs/rank-0.log"

cpu_pair_setup
STEPS=96
# The epochs are not the limit: the fraction is the steps'.
cpu_pair_search t "[\"$PY\", \"$SRC/tests/python/scenario.py\", \"--steps\", \"$STEPS\",
  \"--epochs\", \"1000\", \"--dataset-size\", \"4096\", \"--lr\", \"{lr}\"]" \
  "[0.0001, 0.03, 0.0003, 0.003]"
ctl submit search.toml >out 2>&1 || { cat out; fail "submit the search"; }

state_of() { # APP: its state
  ctl -o json status >status.json 2>status.err || fail "status: $(cat status.err)"
  json_eval status.json "[a for a in d['data']['apps'] if a['name'] == '$1'][0]['state']"
}
start=$(date +%s)
i=0
while [ "$(state_of t)" != finished ]; do
  i=$((i + 1))
  ctl -q round >"round.log" 2>&1 || fail "round $i: $(cat round.log)"
  [ $(($(date +%s) - start)) -gt 240 ] && fail "app t not finished after 240 s ($i rounds)"
  sleep 0.3  # the rounds' pace (a poll: the loop ends on the app's state)
done
echo "app t finished after $i rounds, $(($(date +%s) - start)) s"

"$PY" - "$ST" "$STEPS" "$E2E_LIB" <<'PY' || fail "the search's trials"
import glob, json, sys
st, steps = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from app_trials import check, reports, rungs
jobs = {j["name"]: j for j in json.load(open("status.json"))["data"]["jobs"]}
trials = ["t-000", "t-001", "t-002", "t-003"]
reports = reports(st)
for t in trials:
    check(all("fraction" in r for r in reports.get(t, [])), "%s: a report without the fraction" % t)
rung = rungs(reports, trials)
check(sorted(rung) == [0.25, 0.5], "rung reports at fractions %s" % sorted(rung))
for frac, n in ((0.25, 4), (0.5, 2)):
    check(len(rung[frac]) == n, "%d trials at rung %g: %s" % (n, frac, rung[frac]))
    check(all(s == int(steps * frac) for s, _ in rung[frac].values()),
          "rung %g steps %s" % (frac, rung[frac]))
    on = [t for t in trials if jobs[t]["state"] == "finished" or
          (frac == 0.25 and t in rung[0.5])]
    out = [t for t in rung[frac] if t not in on]
    check(all(rung[frac][t][1] >= rung[frac][u][1] for t in out for u in on),
          "rung %g: %s stopped, %s went on (losses %s)" % (frac, out, on, rung[frac]))
finished = [t for t in trials if jobs[t]["state"] == "finished"]
stopped = [t for t in trials if jobs[t]["state"] == "stopped"]
check(len(finished) == 1 and len(stopped) == 3, "states %s" % {t: jobs[t]["state"] for t in trials})
done = [r for r in reports[finished[0]] if r["reason"] == "done"]
check([(r["step"], r["fraction"]) for r in done] == [(steps, 1.0)], "the survivor's end %s" % done)
# Each phase after the first resumed from the checkpoint of the rung before it.
for t, at in [(t, steps // 4) for t in rung[0.5]] + [(finished[0], steps // 2)]:
    logs = "".join(open(f).read() for f in glob.glob(st + "/nodes/*/jobs/%s/logs/rank-0.log" % t))
    check("restored step %d " % at in logs, "%s did not resume at step %d" % (t, at))
# Finish-time fairness, live, from the trials' own fraction of their training: the app's
# rho is measured once it ended.
app = [a for a in json.load(open("status.json"))["data"]["apps"] if a["name"] == "t"][0]
check(isinstance(app["rho"], float) and app["rho"] > 0 and app["rho_measured"], "app t %s" % app)
PY
echo "PASS"
