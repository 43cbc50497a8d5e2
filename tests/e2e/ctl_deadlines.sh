#!/bin/sh
# Deadlines (issue 34) in the live cron-style controller on the CPU (`sia-ctl round` from a
# shell loop, the default local node commands, the reference worker; see
# ctl_cron_rounds.sh), on two nodes of two T4s. By the catalog's model of cifar10, one hour
# takes two of the four GPUs: two guaranteed jobs are admitted, a third is refused (65,
# one line saying by when it could finish, nothing queued) and, with --or-best-effort,
# runs as best-effort. Both guaranteed jobs finish by their deadlines beside two
# best-effort jobs, every round re-checking them ("on schedule" in explain, a projected
# finish in status). Bad input -- a deadline in the past, one before the submission, NaN,
# an unknown class -- is refused with one line naming the field, 65, nothing queued.
#   ctl_deadlines.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
. "$E2E_LIB/cpu_pair.sh"
at_exit cpu_pair_stop g1 g2 g3 b1 b2
on_fail() {
  ctl status
  ctl explain g1
}
logs "$ST/nodes/*/jobs/*/supervisor.log" "$ST/nodes/*/jobs/*/logs/rank-0.log"

cpu_pair_setup
STEPS=1500
job() {
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = 2
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "$STEPS"]
$2
TOML
}
for j in g1 g2 g3 b1 b2 bad; do job $j; done
inbox() { ls "$ST/inbox" 2>/dev/null | wc -l; }
# refused WHAT FIELD COMMAND...: COMMAND exits 65 with one line naming FIELD; nothing queued.
refused() {
  _what=$1 _field=$2
  shift 2
  _before=$(inbox)
  "$@" >out 2>&1
  _rc=$?
  [ "$_rc" -eq 65 ] || { cat out; fail "$_what: exited $_rc, not 65"; }
  [ "$(wc -l <out)" -eq 1 ] || { cat out; fail "$_what: not one line"; }
  grep -q "$_field" out || { cat out; fail "$_what: the line does not name $_field"; }
  [ "$(inbox)" -eq "$_before" ] || fail "$_what: something was queued"
}

# Bad input.
refused "a deadline in the past" "deadline" \
  ctl submit --class guaranteed --deadline 2020-01-01T00:00:00Z bad.toml
job bad 'deadline = "2020-01-01T00:00:00Z"'
refused "a deadline before the submission" "deadline" ctl submit --class guaranteed bad.toml
job bad 'deadline = nan'
refused "a NaN deadline" "deadline" ctl submit bad.toml
refused "a NaN --deadline" "deadline" ctl submit --deadline nan g1.toml
job bad 'class = "gold"
deadline = "1h"'
refused "an unknown class" "class" ctl submit bad.toml
refused "an unknown --class" "class" ctl submit --class gold --deadline 1h g1.toml
refused "a guaranteed job without a deadline" "class" ctl submit --class guaranteed g1.toml

# Admission: two guaranteed jobs take two GPUs each; the third finds none left.
ctl submit --class guaranteed --deadline 1h g1.toml >out 2>&1 || { cat out; fail "submit g1"; }
ctl submit --class guaranteed --deadline 1h g2.toml >out 2>&1 || { cat out; fail "submit g2"; }
refused "a third guaranteed job" "g3: deadline: .* cannot be met" \
  ctl submit --class guaranteed --deadline 1h g3.toml
grep -q "it could finish by 20[0-9-]*T[0-9:]*Z at best" out || fail "g3: no finish: $(cat out)"
ctl submit --class guaranteed --deadline 1h --or-best-effort g3.toml >out 2>&1 ||
  { cat out; fail "submit g3 --or-best-effort"; }
ctl submit b1.toml >/dev/null || fail "submit b1"
ctl submit b2.toml >/dev/null || fail "submit b2"

start=$(date +%s)
i=0
on_schedule=0
while :; do
  i=$((i + 1))
  ctl -o json round >"round-$i.json" 2>"round-$i.err" ||
    { cat "round-$i.err"; fail "round $i exited $?"; }
  ctl -o json status >status.json || fail "status"
  # The round's re-check: status projects the finish, explain says it is on schedule.
  if json_has status.json \
    'has(d, name="g1", state="running", at_risk=False) and find(d, name="g1")[0]["projected_finish"]' &&
    ctl explain g1 2>/dev/null | grep -q "on schedule: deadline .*, projected finish by "; then
    on_schedule=$((on_schedule + 1))
  fi
  done_jobs=$(json_eval status.json 'count(d, state="finished")')
  [ "$done_jobs" -eq 5 ] && break
  [ $(($(date +%s) - start)) -gt 400 ] && fail "not finished after 400 s ($i rounds)"
  sleep 0.5 # the rounds' pace (a poll: the loop ends on the jobs' states)
done
echo "all five jobs finished after $i rounds, $(($(date +%s) - start)) s"
[ "$on_schedule" -ge 1 ] || fail "status and explain never said g1 was on schedule"

"$E2E_PY" - status.json <<'PY' || fail "the deadlines"
import json, sys
jobs = {j["name"]: j for j in json.load(open(sys.argv[1]))["data"]["jobs"]}
for g in ("g1", "g2"):
    j = jobs[g]
    if j["class"] != "guaranteed" or j["state"] != "finished":
        sys.exit("%s: %s, %s" % (g, j["class"], j["state"]))
    if not j["ended"] <= j["deadline"]:
        sys.exit("%s ended at %s, after its deadline %s" % (g, j["ended"], j["deadline"]))
    if j["at_risk"]:
        sys.exit("%s was left at risk" % g)
for b in ("g3", "b1", "b2"):
    if jobs[b]["class"] != "best_effort" or jobs[b]["state"] != "finished":
        sys.exit("%s: %s, %s" % (b, jobs[b]["class"], jobs[b]["state"]))
print("g1 and g2 met their deadlines by %.0f s and %.0f s" %
      tuple(jobs[g]["deadline"] - jobs[g]["ended"] for g in ("g1", "g2")))
PY
echo "ok"
