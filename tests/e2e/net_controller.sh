#!/bin/sh
# Several hosts (lib/netns.sh): the controller host is cut from every node (its veth off
# the bridge) past the agents' lease, then healed; later it is "rebooted" (every process
# killed, its namespace made again, its local disk and state directory kept) and serve
# starts again on it. The agents fence themselves while cut off, come back, and every job
# ends once. Checks, from the workers' timelines: no overlap of generations, no step limit
# exceeded, nothing started after a job finished, status agrees with what ran.
# Root only (skips with 77 otherwise). SIA_NETFAULT_SECONDS lengthens the partition.
#   net_controller.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/net_cluster.sh"
STEPS=8000
logs "$tmp/ctl-*.log" "$tmp/agent-*.log"
on_fail() { ctl -o json status 2>&1 | head -c 2000; echo; }
net_cluster 5
net_agents
start=$(date +%s)
net_job a "$STEPS"
net_job b "$STEPS"
net_running a b
# The cut outlasts the nodes' silence limit: the agents fence themselves, and so does the
# controller fence them.
CUT=$(($(net_silence t4-0) + 5 + ${SIA_NETFAULT_SECONDS:-0}))
cut_at=$(date +%s)
host_cut ctl
echo "cut the controller at $(($(date +%s) - start)) s"
self_fenced() { grep -q "(fencing)" "agent-$1.log"; }
for n in $NET_NODES; do wait_for 60 "the agent of $n did not fence itself" self_fenced "$n"; done
# The partition lasts CUT seconds in all (a fault's length in time, not a wait for an event).
left=$((CUT - ($(date +%s) - cut_at)))
[ "$left" -gt 0 ] && sleep "$left"
host_heal ctl
echo "healed at $(($(date +%s) - start)) s"
# Back: some agent heard the controller again after the heal, and the jobs run again.
back() { grep -q "the controller is back" agent-t4-0.log agent-t4-1.log agent-t4-2.log; }
wait_for 90 "no agent heard the controller again" back
going() { case $(job_state "$1") in running | finished) return 0 ;; esac; return 1; }
both_going() { going a && going b; }
wait_for 90 "a and b do not run again after the heal" both_going
net_job c "$STEPS"
# The reboot: the controller host's processes and namespace gone, its disk kept.
host_reboot ctl
echo "rebooted the controller host at $(($(date +%s) - start)) s"
start_ctl ctl-1.log
net_settle 300 "$STEPS"
echo "ok ($(($(date +%s) - start)) s)"
