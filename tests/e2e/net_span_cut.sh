#!/bin/sh
# Several hosts (lib/netns.sh): a job on four GPUs spans two hosts; once it wrote a
# checkpoint, only the link between its two hosts is cut (pair_cut: each drops what it
# sends to the other), both still reaching the controller. Its ranks cannot reach their
# peers and exit 69 on both hosts (SIA_PEER_TIMEOUT short); no node is down, no rank failed
# by itself: not the job's failure (sia-ctl(1), FAILURE MODEL). The controller journals it
# (job-peer-lost), says so, and starts the job again from its checkpoint as a new attempt
# on the same hosts; the cut is healed and the job finishes exactly at its step limit.
# Checks, from the workers' own timelines: ranks exited 69 on both hosts, neither host was
# fenced, the job ended once, no two generations ran at once, no step trained past the
# limit, the new generation restored a checkpoint, status and history agree with what ran
# and name the restart (peer_restarts, notice).
# Root only (skips with 77 otherwise). SIA_NETFAULT_SECONDS lengthens the job.
#   net_span_cut.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/net_cluster.sh"
# Cut once it trained past its first checkpoint (every 200 steps).
net_span_cut
# Every rank of the generation that ran at the cut loses its peer (69), on both hosts.
lost_on() { [ "$(net_lost_on "$1")" -ge 1 ]; }  # lost_on NETNS: a rank there exited 69
wait_for 60 "no rank of x on $a exited 69" lost_on "$ns_a"
wait_for 60 "no rank of x on $b exited 69" lost_on "$ns_b"
said() { grep -q "job x: its ranks lost their peers on every node while all were up" ctl-0.log; }
wait_for 60 "the controller did not restart x for its lost peers" said
pair_heal "$a" "$b"
echo "healed at $(($(date +%s) - start)) s"
net_settle 240 "$STEPS"
json_has status.json "has(d['data']['jobs'], name='x', state='finished')" ||
  fail "x did not finish: $(json_eval status.json "find(d['data']['jobs'], name='x')")"
json_has status.json "any(j['name'] == 'x' and j['peer_restarts'] >= 1 and
  'restarted from its checkpoint (attempt' in j['notice'] for j in d['data']['jobs'])" ||
  fail "status does not name x's restart: $(json_eval status.json "find(d['data']['jobs'], name='x')")"
ctl -o json history >history.json || fail "history"
json_has history.json "any(j['name'] == 'x' and j['peer_restarts'] >= 1 and
  j['state'] == 'finished' for j in d['data']['jobs'])" ||
  fail "history does not name x's restart: $(json_eval history.json "find(d['data']['jobs'], name='x')")"
net_not_fenced "$a" "$b"
# Started again on the same two hosts after the cut, from a checkpoint.
for ns in "$ns_a" "$ns_b"; do
  again=$(awk -v t="$cut_at" -v ns="$ns" '$1 == "start" && $2 == "x" && $5 > t && $6 == ns' \
    events.log | wc -l)
  [ "$again" -ge 2 ] || fail "x did not start again on both of its hosts after the cut"
done
grep -qs "restored step" "$tmp"/hosts/*/local/node/jobs/x/logs/rank-0.log ||
  fail "x's new attempt restored no checkpoint"
echo "x restarted from its checkpoint and finished at $STEPS ($(($(date +%s) - start)) s)"
