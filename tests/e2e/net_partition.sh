#!/bin/sh
# Several hosts (lib/netns.sh): a node host that runs a job is cut from the network (its
# veth taken off the bridge: a black hole) for longer than the fencing time, then healed.
# The semantics (sia-ctl(1), FAILURE MODEL): the agent, having heard nothing for its
# --fence-after, checkpoint-stops its jobs; the controller counts them stopped only after
# the silence limit of the lease the agent said (heartbeat_interval x (heartbeat_liveness +
# 1) + max(fence_after, grace) + grace), and places them elsewhere; the healed agent says
# READY and its next ASSIGN leaves it what it holds now.
# Checks, from the workers' timelines: two generations of a job never ran at once, no step
# trained past the limit, every job ended once, status agrees with what ran.
# Root only (skips with 77 otherwise). SIA_NETFAULT_SECONDS lengthens the partition.
#   net_partition.sh BIN_DIR SOURCE_DIR
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
net_job c "$STEPS"
net_running a b c
busy_host
# The partition outlasts the node's silence limit, as the controller has it from the lease.
silence=$(net_silence "$victim")
CUT=$((silence + 6 + ${SIA_NETFAULT_SECONDS:-0}))
host_cut "$victim"
cut_at=$(date +%s)
echo "cut $victim at $((cut_at - start)) s (its silence limit: $silence s)"
fenced() { grep -q "$victim is fenced" ctl-0.log; }
wait_for $((silence + 30)) "$victim was not fenced" fenced
fenced_after=$(($(date +%s) - cut_at))
[ "$fenced_after" -ge $((silence - 2)) ] ||  # a heartbeat and whole seconds
  fail "$victim was fenced $fenced_after s after the cut, before its silence limit of $silence s"
self_fenced() { grep -q "checkpoint-stopping this node's jobs (fencing)" "agent-$victim.log"; }
wait_for 30 "the agent of $victim did not fence itself" self_fenced
echo "$victim fenced at $(($(date +%s) - start)) s"
# The partition lasts CUT seconds in all (a fault's length in time, not a wait for an event).
left=$((CUT - ($(date +%s) - cut_at)))
[ "$left" -gt 0 ] && sleep "$left"
host_heal "$victim"
echo "healed $victim at $(($(date +%s) - start)) s"
back() { grep -q "$victim reconnected\|$victim connected" ctl-0.log &&
  [ "$(grep -c "$victim connected\|$victim reconnected" ctl-0.log)" -ge 2 ]; }
wait_for 90 "$victim did not come back" back
net_settle 300 "$STEPS"
echo "ok ($(($(date +%s) - start)) s)"
