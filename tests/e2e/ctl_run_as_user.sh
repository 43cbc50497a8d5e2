#!/bin/sh
# Jobs run as the submitting client's account (root only: skipped, status 77, otherwise).
# `sia-ctl serve` on loopback TCP with CURVE keys and one `sia-run agent` running as root;
# the allow-list maps client alice to the account nobody, gives bob no user, and maps carol
# to an account the node does not have. Checks: alice's job runs as nobody (its command
# writes `id -u`: 65534) and its checkpoint directory, log directory and rank log are
# nobody's; status and explain say whom it runs as; bob's job (no user, no admin) fails on
# the node saying its jobs do not run as root; carol's fails saying the account does not
# exist. Everything runs under umask 000: still, no file or directory the controller or the
# agent keeps is readable by others (job data is private whatever the umask).
#   ctl_run_as_user.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/cpu_pair.sh"
[ "$(id -u)" -eq 0 ] || skip "running jobs as another user needs root (run this test as root)"
id nobody >/dev/null 2>&1 || skip "no account nobody"
chmod 0755 "$tmp"  # nobody's workers reach their files under it
umask 000
. "$E2E_LIB/agent_keys.sh"
. "$E2E_LIB/job_history.sh"
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
stop_jobs() {
  for j in ra rb rc; do
    [ -d "$tmp/nodes/t4-0" ] && "$BIN/sia-run" --state-dir "$tmp/nodes/t4-0" stop --grace 0 "$j"
  done
}
at_exit stop_jobs
on_fail() {
  ctl -o json status 2>&1 | head -c 3000
  echo
}
logs "$tmp/ctl.log" "$tmp/agent.log" "$tmp/nodes/*/jobs/*/supervisor.log" \
  "$tmp/nodes/*/jobs/*/logs/rank-0.log"
has_ended() { s=$(job_state "$1"); [ "$s" = finished ] || [ "$s" = failed ]; }
public() { sed -n 's/^public *= *"\(.*\)"/\1/p' "keys/$1.pub"; }

t4_cluster cpu-one 1 4
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
bind = "tcp://127.0.0.1:*"
round = 1
retention = 500
time_limit = 1
heartbeat_interval = 0.5
heartbeat_liveness = 8
secret_key = "keys/ctl.key"
allow = "allow.toml"
[client]
server_key = "keys/ctl.pub"
secret_key = "keys/alice.key"
TOML
agent_keys "$BIN" keys t4-0
for k in ctl alice bob carol; do
  ctl keygen "keys/$k" >/dev/null || fail "keygen $k"
done
{
  cat keys/allow.toml
  printf '[[client]]\nname = "alice"\nkey = "%s"\nuser = "nobody"\n' "$(public alice)"
  printf '[[client]]\nname = "bob"\nkey = "%s"\n' "$(public bob)"
  printf '[[client]]\nname = "carol"\nkey = "%s"\nuser = "sia-no-such-user"\n' "$(public carol)"
} >allow.toml
job() {  # job NAME: writes `id -u` into its checkpoint directory and exits 0
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = 1
command = ["sh", "-c", "id -u >\"\$SIA_CKPT_DIR/uid\"; echo \"ran as \$(id -u) \$USER \$HOME\""]
TOML
}
job ra
job rb
job rc

"$BIN/sia-ctl" --config config.toml serve >ctl.log 2>&1 &
started $!
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl.log; }
wait_for 60 "serve did not start: $(cat ctl.log)" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl.log | head -1)
echo "connect = \"$EP\"" >>config.toml  # [client] is the file's last section
"$BIN/sia-run" --state-dir nodes/t4-0 agent --connect "$EP" --node t4-0 \
  --cluster cluster.toml --server-key keys/ctl.pub --secret-key keys/t4-0.key \
  --heartbeat-interval 0.5 --heartbeat-liveness 8 --grace 10 \
  --ckpt-root "$tmp/ckpt" --report-interval 0.3 >agent.log 2>&1 &
started $!
connected() { grep -q "t4-0 connected" ctl.log; }
wait_for 60 "the agent did not connect" connected

ctl submit ra.toml >out 2>&1 || { cat out; fail "alice's submit"; }
ctl --secret-key keys/bob.key submit rb.toml >out 2>&1 || { cat out; fail "bob's submit"; }
ctl --secret-key keys/carol.key submit rc.toml >out 2>&1 || { cat out; fail "carol's submit"; }
for j in ra rb rc; do wait_for 120 "$j did not end" has_ended "$j"; done

# alice's job ran as nobody, in files that are nobody's.
[ "$(job_state ra)" = finished ] || fail "ra: $(job_state ra), not finished"
[ "$(cat ckpt/ra/uid 2>/dev/null)" = 65534 ] || fail "ra ran as uid $(cat ckpt/ra/uid 2>&1)"
for f in ckpt/ra nodes/t4-0/jobs/ra/logs nodes/t4-0/jobs/ra/logs/rank-0.log \
  nodes/t4-0/jobs/ra/reports.jsonl; do
  [ "$(stat -c %U "$f")" = nobody ] || fail "$f belongs to $(stat -c %U "$f"), not nobody"
done
grep -q "^ran as 65534 nobody " nodes/t4-0/jobs/ra/logs/rank-0.log ||
  fail "ra's log: $(cat nodes/t4-0/jobs/ra/logs/rank-0.log)"
ctl -o json status ra | json_has - 'has(d, name="ra", run_as="nobody")' ||
  fail "status ra: no run_as nobody"
open=$(find state nodes \( -type f -o -type d \) -perm /044 -printf '%m %p\n')
[ -z "$open" ] || fail "readable by others under umask 000: $open"
ctl status ra rb >out || fail "status ra rb"
grep -q "^ra  *nobody  *finished " out && grep -q "^rb  *bob  *failed " out ||
  { cat out; fail "status's USER column: nobody for ra (its account), bob for rb (its client)"; }
# history names each job's user as status does.
ctl history >out 2>&1 || fail "history"
grep -q "^ra  *nobody " out && grep -q "^rb  *bob " out ||
  { cat out; fail "history's USER column differs from status's"; }
ctl explain ra >out || fail "explain ra"
grep -q "runs as nobody on its nodes" out || { cat out; fail "explain ra: whom it runs as"; }

# bob has no user and is no admin: the root agent refuses to run his job as root.
[ "$(job_state rb)" = failed ] || fail "rb: $(job_state rb), not failed"
ctl -o json status rb | json_has - 'match(d, "reason", "node t4-0: client:bob has no user in the allow-list and is no admin; its jobs do not run as root")' ||
  fail "rb's reason: $(ctl -o json status rb)"
[ -e ckpt/rb/uid ] && fail "rb ran (as uid $(cat ckpt/rb/uid))"

# carol's account does not exist on the node.
[ "$(job_state rc)" = failed ] || fail "rc: $(job_state rc), not failed"
ctl -o json status rc | json_has - 'match(d, "reason", "node t4-0: account sia-no-such-user does not exist")' ||
  fail "rc's reason: $(ctl -o json status rc)"
[ -e ckpt/rc/uid ] && fail "rc ran (as uid $(cat ckpt/rc/uid))"
echo "OK: alice's job ran as nobody; bob's and carol's were refused with their reasons"
