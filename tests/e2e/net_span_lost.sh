#!/bin/sh
# Several hosts (lib/netns.sh): a job on four GPUs spans two hosts; once it wrote a
# checkpoint, one of its two hosts is lost for good (processes, namespace and local disk
# gone). Its ranks on the other host cannot reach their peer and exit 69 (SIA_PEER_TIMEOUT
# short) before the lost host is fenced. That is not the job's failure (sia-ctl(1), FAILURE
# MODEL): the controller waits for the silent host, and once it is fenced the next
# placement (the survivor and the third host) resumes the job from the shared checkpoint
# root; it finishes exactly at its step limit.
# Checks, from the workers' own timelines: a rank did exit 69, the job ended once, no two
# generations ran at once, no step trained past the limit, the new generation restored a
# checkpoint, status agrees with what ran.
# Root only (skips with 77 otherwise). SIA_NETFAULT_SECONDS lengthens the job.
#   net_span_lost.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/net_cluster.sh"
# Lose one of its hosts once it trained past its first checkpoint (every 200 steps).
net_span
victim=$span_b survivor=$span_a
silence=$(net_silence "$victim")
ns=$(host_exec "$victim" readlink /proc/self/ns/net)
lost_at=$(date +%s.%N)
host_lose "$victim"
timeline_lost events.log "$ns"
echo "lost $victim (x's other host: $survivor) at $(($(date +%s) - start)) s"
# The survivor's ranks lose their peer (69) before the controller fences the lost host.
peer_lost() { awk '$1 == "end" && $2 == "x" && $6 == 69' events.log | grep -q .; }
wait_for 60 "no rank of x on $survivor exited 69" peer_lost
fenced() { cat "$tmp"/ctl-*.log | grep -q "$victim is fenced"; }
wait_for $((silence + 30)) "$victim was not fenced" fenced
echo "$victim fenced at $(($(date +%s) - start)) s"
said() { grep -q "job x: its ranks on $survivor lost a peer on a node that is down" ctl-0.log; }
wait_for 30 "the controller did not say x's ranks lost a peer on a node that is down" said
net_settle 240 "$STEPS"
json_has status.json "has(d['data']['jobs'], name='x', state='finished')" ||
  fail "x did not finish: $(json_eval status.json "find(d['data']['jobs'], name='x')")"
resumed=$(awk -v t="$lost_at" '$1 == "start" && $2 == "x" && $5 > t' events.log | wc -l)
[ "$resumed" -ge 2 ] || fail "x did not start again on two hosts after the loss"
grep -qs "restored step" "$tmp"/hosts/*/local/node/jobs/x/logs/rank-0.log ||
  fail "x's new generation restored no checkpoint"
echo "x resumed from its checkpoint and finished at $STEPS ($(($(date +%s) - start)) s)"
