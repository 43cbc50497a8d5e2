#!/bin/sh
# Several hosts (lib/netns.sh): as net_span_cut.sh, a job on four GPUs spans two hosts and,
# once it wrote a checkpoint, only the link between them is cut -- but the cut lasts, and
# controller.peer_retries is 1 (SIA_CTL_PEER_RETRIES). The ranks lose their peers (69) on
# both hosts; the controller restarts the job from its checkpoint as attempt 1, the one
# retry it allows; the new generation cannot rendezvous across the cut either
# (SIA_RENDEZVOUS_TIMEOUT short) and its ranks exit 69 again, with no progress in between:
# the job ends failed, once, with the reason naming its lost peers and the retries
# (sia-ctl(1), FAILURE MODEL), and is never started again.
# Checks, from the workers' own timelines: ranks exited 69 on both hosts in both
# generations, neither host was fenced, one restart for the lost peers, the job ended
# exactly once (failed; every round's "ended" summed), no two generations ran at once, no
# generation started after the failure, status and history name the restart and the
# retries used.
# Root only (skips with 77 otherwise).
#   net_span_retries.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/net_cluster.sh"
export SIA_CTL_PEER_RETRIES=1
export SIA_RENDEZVOUS_TIMEOUT=20  # a generation across the cut gives up well before 60 s
net_span_cut
restarted() { grep -q "job x: its ranks lost their peers on every node while all were up" ctl-0.log; }
wait_for 60 "the controller did not restart x for its lost peers" restarted
echo "x restarted for its lost peers at $(($(date +%s) - start)) s"
net_settle 180 "$STEPS"
json_has status.json "has(d['data']['jobs'], name='x', state='failed')" ||
  fail "x did not fail: $(json_eval status.json "find(d['data']['jobs'], name='x')")"
# The reason: the lost peers (where the last rank said so) and the retries spent.
json_has status.json "any(j['name'] == 'x' and
  j['reason'].startswith('its ranks lost their peers on every node while all were up, 2 time(s)') and
  '(controller.peer_retries 1)' in j['reason'] and 'last reported by ' in j['reason'] and
  ('rendezvous' in j['reason'] or 'peer' in j['reason'].split('last reported by ')[1])
  for j in d['data']['jobs'])" ||
  fail "x's reason: $(json_eval status.json "find(d['data']['jobs'], name='x')[0]['reason']")"
json_has status.json "any(j['name'] == 'x' and j['peer_restarts'] == 1 and
  j['peer_retries_used'] == 1 for j in d['data']['jobs'])" ||
  fail "status's peer restarts: $(json_eval status.json "find(d['data']['jobs'], name='x')")"
ctl -o json history >history.json || fail "history"
json_has history.json "any(j['name'] == 'x' and j['state'] == 'failed' and
  j['peer_restarts'] == 1 for j in d['data']['jobs'])" ||
  fail "history: $(json_eval history.json "find(d['data']['jobs'], name='x')")"
ctl explain x >explain.txt || fail "explain x"
grep -q "peer-lost restarts: 1 (1 of 1 retries used" explain.txt ||
  fail "explain does not say the retries used: $(cat explain.txt)"
# Both generations lost their peers on both hosts; one restart, one end.
for ns in "$ns_a" "$ns_b"; do
  [ "$(net_lost_on "$ns")" -ge 2 ] || fail "not every generation of x lost its peers on $ns"
done
restarts=$(grep -c "restarts from its checkpoint as attempt" ctl-0.log)
[ "$restarts" -eq 1 ] || fail "x was restarted $restarts times for its lost peers, not once"
ended=$(sed -n 's/.*round [0-9]*: .* \([0-9][0-9]*\) ended,.*/\1/p' ctl-0.log |
  awk '{ n += $1 } END { print n + 0 }')
[ "$ended" -eq 1 ] || fail "the rounds ended $ended jobs, not x once"
net_not_fenced "$a" "$b"
# Never started again: a few rounds more, and no generation after the failure.
sleep 6
failed_at=$(json_eval status.json "find(d['data']['jobs'], name='x')[0]['ended']")
late=$(awk -v t="$failed_at" '$1 == "start" && $2 == "x" && $5 > t' events.log | wc -l)
[ "$late" -eq 0 ] || fail "x started $late rank(s) after it failed"
timeline_check events.log
pair_heal "$a" "$b"
echo "x failed once after its one retry ($(($(date +%s) - start)) s)"
