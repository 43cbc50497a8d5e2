#!/bin/sh
# Several hosts (lib/netns.sh): the controller and three agents each in a network
# namespace of its own, on their own addresses, only the checkpoint root shared. A job
# spanning two hosts runs to its end (it rendezvouses on the hosts' real addresses); then
# three jobs run and a node host that runs one is lost for good (processes, namespace and local disk
# gone). Its jobs resume elsewhere from the shared checkpoint root once it is fenced.
# Checks, from the workers' own timelines: every acknowledged job ended, no two
# generations of a job ran at once, no step limit exceeded (a finished job reached it),
# nothing started after a job finished, status agrees with what ran.
# Root only (skips with 77 otherwise). SIA_NETFAULT_SECONDS lengthens the jobs.
#   net_node_lost.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/net_cluster.sh"
STEPS=$((8000 + ${SIA_NETFAULT_SECONDS:-0} * 100))
logs "$tmp/ctl-*.log" "$tmp/agent-*.log"
on_fail() { ctl -o json status 2>&1 | head -c 2000; echo; tail -20 "$tmp/events.log"; }
net_cluster 5
net_agents
start=$(date +%s)
# A job on four GPUs spans two hosts: its ranks rendezvous on the hosts' real addresses.
net_job x 600 4
finished() { [ "$(job_state "$1")" = finished ]; }
wait_for 120 "x (two hosts) did not finish: no rendezvous across hosts?" finished x
echo "x ran on two hosts and finished after $(($(date +%s) - start)) s"
[ "$(max_step "$tmp"/hosts/*/local/node/jobs/x/reports.jsonl)" = 600 ] || fail "x did not reach 600"
sed -i '/^x$/d' acked.txt  # the step checks below are for the jobs of STEPS steps
net_job a "$STEPS"
net_job b "$STEPS"
net_job c "$STEPS"
net_running a b c
# Lose a host that runs something, once its job trained a little.
busy_host
silence=$(net_silence "$victim")
ns=$(host_exec "$victim" readlink /proc/self/ns/net)
lost_at=$(date +%s.%N)
host_lose "$victim"
timeline_lost events.log "$ns"
echo "lost $victim at $(($(date +%s) - start)) s"
fenced() { cat "$tmp"/ctl-*.log | grep -q "$victim is fenced"; }
wait_for $((silence + 30)) "$victim was not fenced" fenced
echo "$victim fenced at $(($(date +%s) - start)) s"
net_settle 300 "$STEPS"
resumed=$(awk -v t="$lost_at" '$1 == "start" && $4 == 0 && $5 > t' events.log | wc -l)
[ "$resumed" -ge 1 ] || fail "nothing of $victim resumed elsewhere"
restarted=$(json_eval status.json 'sum(j["restarts"] for j in d["data"]["jobs"])')
echo "jobs restarted $restarted times in all"
echo "ok ($(($(date +%s) - start)) s)"
