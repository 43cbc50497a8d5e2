#!/bin/sh
# Jobs run as their users through a real Slurm (lib/slurm.sh: two emulated nodes): two
# clients submit through `sia-ctl serve` (root, loopback TCP, CURVE keys), its allow-list
# mapping client alice to the account nobody and client eve to a throwaway account made
# here (useradd, removed at exit); cron rounds as root realise them. Checks:
#   - each job's Slurm job and its rank run under its user's uid (squeue's user, the uid
#     the rank printed to its log), its directory SHARED/slurm/JOB is that user's, 0700;
#   - eve (the job's user, an attacker) replaces her finished generation's exit file with a
#     link to a root-only (0600) file, and links the next generation's script name to
#     /etc/shadow; alice's report file is replaced by a link to another root-only file (as
#     if nobody could: its directory is root's). The controller reads neither secret into
#     any output (status, explain, its log), refuses the links, and writes through none:
#     /etc/shadow is unchanged, eve's next generation runs from a fresh script of hers and
#     fails with its own status 3, alice's job finishes;
#   - a Slurm job of eve's with sia's mark forged on it (comment and name of her own sia
#     job) is never cancelled, signalled nor counted as sia's: it runs to the end and its
#     node is never placed.
# Skips (77) without root, slurm-wlm, munge or useradd.
#   ctl_slurm_user.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
[ "$(id -u)" -eq 0 ] || skip "running jobs as their users needs root"
id nobody >/dev/null 2>&1 || skip "no account nobody"
command -v useradd >/dev/null 2>&1 || skip "no useradd"
. "$E2E_LIB/slurm.sh"
. "$E2E_LIB/job_history.sh"
slurm_bed n1:t4:2 n2:a100:2
chmod 0755 "$tmp" # the users' ranks reach their files under it
EVE=siae$$
useradd --system --no-create-home --shell /bin/sh "$EVE" || fail "useradd $EVE"
at_exit "userdel -f $EVE"
EVE_UID=$(id -u "$EVE")
NOBODY_UID=$(id -u nobody)
ST=$tmp/state
SH=$tmp/shared
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
on_fail() {
  ctl status
  squeue -o "%i %j %u %T %N %b %k"
}
logs "$SH/nodes/*/jobs/*/logs/rank-0.log" "$SH/slurm/*/slurm-*.out"
mkdir keys && chmod 0700 keys
for k in ctl alice eve; do
  ctl keygen "keys/$k" >/dev/null || fail "keygen $k"
done
public() { sed -n 's/^public *= *"\(.*\)"/\1/p' "keys/$1.pub"; }
{
  printf '[[client]]\nname = "alice"\nkey = "%s"\nuser = "nobody"\n' "$(public alice)"
  printf '[[client]]\nname = "eve"\nkey = "%s"\nuser = "%s"\n' "$(public eve)" "$EVE"
} >allow.toml
cat >config.toml <<TOML
[controller]
state_dir = "$ST"
cluster = "$tmp/cluster.toml"
bind = "tcp://127.0.0.1:*"
round = 1
retention = 500
time_limit = 1
secret_key = "keys/ctl.key"
allow = "allow.toml"
[slurm]
enabled = true
conf = "$SLURM_CONF"
partition = "$SLURM_BED_PARTITION"
shared_dir = "$SH"
grace_seconds = 10
report_interval = 0.5
[client]
server_key = "keys/ctl.pub"
secret_key = "keys/alice.key"
TOML
ctl slurm-cluster --write cluster.toml || fail "slurm-cluster"

# The secrets: root's, 0600. 173 would read as an exit status, SECRET-... as report text.
printf '173\n' >secret-exit
printf '{"type":"report","step":9,"text":"SECRET-7731"}\n' >secret-report
chmod 0600 secret-exit secret-report
sha=$(sha256sum /etc/shadow)

# A job whose rank prints its uid, then waits for the file go/NAME (made by the test) and
# exits with STATUS.
mkdir -m 0755 go
job() {  # job NAME STATUS
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = 1
command = ["sh", "-c", "echo \"rank uid \$(id -u)\"; while [ ! -e $tmp/go/$1 ]; do sleep 0.2; done; exit $2"]
TOML
}
job ua 0
job ue 3

# eve's own Slurm job with the mark of her sia job's first generation, on n1 (t4).
forged=$(runuser -u "$EVE" -- sbatch --parsable --chdir=/ -o /dev/null -w n1 \
  --gres=gpu:t4:1 --comment=sia:ue:1 -J sia.ue.1 --wrap 'sleep 3000') ||
  fail "sbatch as $EVE"
slurm_wait_job "$forged" RUNNING

# The jobs are submitted through `serve` by two clients (the allow-list gives each its
# account: journaled with the job), then realised by cron rounds (`sia-ctl round` as root,
# paced by the loop), so that the attack lands between two rounds.
"$BIN/sia-ctl" --config "$tmp/config.toml" serve >ctl.log 2>&1 &
SERVE=$!
started $SERVE
logs "$tmp/ctl.log" "$tmp/rounds.log"
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl.log 2>/dev/null; }
wait_for 60 "serve did not start" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl.log | head -1)
echo "connect = \"$EP\"" >>config.toml # [client] is the file's last section
ctl submit ua.toml >out 2>&1 || { cat out; fail "alice's submit"; }
ctl --secret-key keys/eve.key submit ue.toml >out 2>&1 || { cat out; fail "eve's submit"; }
kill "$SERVE"
wait "$SERVE"
grep -v '^connect = ' config.toml >config.new && mv config.new config.toml # local from here

# rounds_until SECONDS WHAT COMMAND...: a round, then COMMAND, until COMMAND succeeds.
rounds_until() {
  ru_limit=$1 ru_what=$2
  shift 2
  ru_start=$(date +%s)
  while :; do
    ctl round >>rounds.log 2>&1 || fail "a round exited $?"
    "$@" && return 0
    [ $(($(date +%s) - ru_start)) -gt "$ru_limit" ] && fail "$ru_what after $ru_limit s"
    sleep 1 # the rounds' pace (a poll: the loop ends on COMMAND)
  done
}
state_is() { [ "$(job_state "$1")" = "$2" ]; }

# Each runs in Slurm as its user, and its rank says so.
runs_as() { squeue -h -n "sia.$1.1" -u "$2" -w n2 -t R -o %i | grep -q .; }
both_run() { runs_as ua nobody && runs_as ue "$EVE"; }
rounds_until 180 "ua and ue not running in Slurm as nobody and $EVE" both_run
printed() { grep -q "^rank uid $2\$" "$SH/nodes/n2/jobs/$1/logs/rank-0.log" 2>/dev/null; }
wait_for 60 "ua's rank did not print uid $NOBODY_UID" printed ua "$NOBODY_UID"
wait_for 60 "ue's rank did not print uid $EVE_UID" printed ue "$EVE_UID"
for j in ua:nobody ue:$EVE; do
  d=$SH/slurm/${j%%:*}
  [ "$(stat -c '%U %a' "$d")" = "${j#*:} 700" ] ||
    fail "$d is $(stat -c '%U %a' "$d"), not ${j#*:}'s, 700"
done
[ "$(stat -c %U "$SH/slurm")" = root ] || fail "$SH/slurm is not root's"

# The attack, between two rounds: ue's first generation ends (its exit file says 3), then
# eve swaps that file for a link to root's secret and links the next generation's script
# name to /etc/shadow; ua's report file becomes a link to root's other secret.
ue_job=$(json_get "$ST/slurm/ue.json" .slurm_job) # not by name: eve's forged job has it too
touch go/ue
ended() { [ -z "$(slurm_job_state "$1")" ] || [ "$(slurm_job_state "$1")" = FAILED ]; }
wait_for 120 "ue's first generation did not end" ended "$ue_job"
[ "$(cat "$SH/slurm/ue/gen-1.exit")" = 3 ] || fail "ue's exit file: $(cat "$SH/slurm/ue/gen-1.exit")"
runuser -u "$EVE" -- ln -sfn "$tmp/secret-exit" "$SH/slurm/ue/gen-1.exit" ||
  fail "eve's link"
runuser -u "$EVE" -- ln -sfn /etc/shadow "$SH/slurm/ue/gen-2.sh" || fail "eve's shadow link"
ln -sfn "$tmp/secret-report" "$SH/nodes/n2/jobs/ua/reports.jsonl" || fail "report link"
# The status behind the link is never read: the generation ended without one, so ue
# restarts; its second generation finds GO and exits 3 from a script of its own.
rounds_until 180 "ue did not fail" state_is ue failed
ctl -o json status ue >ue.json || fail "status ue"
json_has ue.json 'find(d, name="ue")[0].get("exit_status") != 173' ||
  fail "ue's status read the secret: $(cat ue.json)"
[ "$(cat "$SH/slurm/ue/gen-2.exit" 2>&1)" = 3 ] ||
  fail "ue's second generation did not exit 3 from its own script"
[ "$(sha256sum /etc/shadow)" = "$sha" ] || fail "/etc/shadow changed"
[ -L /etc/shadow ] && fail "/etc/shadow is a link"
[ -L "$SH/slurm/ue/gen-2.sh" ] && fail "gen-2.sh is still eve's link"
[ "$(stat -c %U "$SH/slurm/ue/gen-2.sh")" = "$EVE" ] || fail "gen-2.sh is not eve's"
grep -q "gen-1.exit: refused: a symbolic link" rounds.log ||
  fail "no round said it refused the link"
ctl status >status.txt 2>&1
ctl explain ue >explain.txt 2>&1
ctl -o json status >status.json 2>&1
ctl history >history.txt 2>&1
for f in status.txt explain.txt status.json ue.json history.txt rounds.log; do
  grep -q "SECRET-7731" "$f" && fail "$f holds the report secret"
done
grep -q "exit_status.: *173" status.json && fail "status holds the exit secret"

# alice's job ends as it should.
touch go/ua
rounds_until 120 "ua did not finish" state_is ua finished

# eve's forged job: untouched, its node never sia's.
[ "$(slurm_job_state "$forged")" = RUNNING ] || fail "eve's forged job is $(slurm_job_state "$forged")"
! grep -l '"n1"' "$ST"/rounds/r*-placement.json 2>/dev/null | grep -q . || fail "a placement used n1"
echo "ok: ua ran as nobody, ue as $EVE; links refused; the forged job untouched"
