#!/bin/sh
# A job whose workers never report (here: `sleep`), under `sia-ctl round` with short
# silence settings: status flags it silent, the controller restarts it once from its
# checkpoint (a job-silent round), then fails it with the reason, and its node stops it --
# it is never "running" forever.
#   ctl_hung_job.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/cpu_pair.sh"
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
at_exit '"$BIN/sia-run" --state-dir "$tmp/state/nodes/t4-0" stop --grace 0 h'
logs "$tmp/rounds.log"
on_fail() { ctl status; }
t4_cluster cpu-one 1 2
cat >config.toml <<'TOML'
[controller]
state_dir = "state"
cluster = "cluster.toml"
time_limit = 1
silent_after = 1
hung_timeout = 3
hung_retries = 1
[nodes]
apply = ["sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node", "{node}",
         "--cluster", "{cluster}", "--jobs", "{jobs}", "--grace", "2", "-o", "json", "-"]
TOML
cat >h.toml <<'TOML'
name = "h"
model = "cifar10"
max_gpus = 1
command = ["sleep", "1000"]
TOML
ctl submit h.toml >/dev/null || fail "submit"
flagged=no
silent_round=no
end=$(($(date +%s) + 90))
while :; do
  [ "$(date +%s)" -ge "$end" ] && fail "h did not fail within 90 s"
  ctl -o json round >round.json 2>>rounds.log || fail "round: $(cat rounds.log)"
  cat round.json >>rounds.log
  json_has round.json 'has(d, silent=["h"])' && silent_round=yes
  ctl -o json status h >status.json || fail "status h"
  json_has status.json 'match(d, "reason", "^silent: no report from its workers")' && flagged=yes
  json_has status.json 'has(d, state="failed")' && break
  sleep 1  # the rounds' pace: h's silence is measured in seconds
done
[ "$flagged" = yes ] || fail "status never flagged h silent"
[ "$silent_round" = yes ] || fail "no round restarted h for its silence"
ctl status h | grep -q "failed .*no report for .*restarted 1 time(s) for it already" ||
  fail "h failed without the reason"
ctl -o json status h | json_has - 'has(d, restarts=1)' || fail "h was not restarted once"
"$BIN/sia-run" --state-dir state/nodes/t4-0 status -o json h | json_has - 'has(d, pids=[])' ||
  fail "h's workers still run on its node"
echo "ok"
