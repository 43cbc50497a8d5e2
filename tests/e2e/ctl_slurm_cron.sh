#!/bin/sh
# Cron rounds (`sia-ctl round` from a shell loop) realised through a real Slurm
# (lib/slurm.sh: four emulated nodes of three GPU types, [slurm] enabled, shared_dir on
# local disk), with the reference worker on the CPU:
#   - job a starts on one GPU and is rescaled to 4 GPUs across two nodes;
#   - the a100 nodes are drained: a is moved to another GPU type;
#   - every restart of a resumes from its checkpoint (its rank 0's log says "restored step
#     N", N > 0, in every generation after the first), and a ends exactly at its step limit;
#   - job b, scancel'ed by its owner in Slurm, is reported cancelled by status and history;
#   - history shows each job's Slurm job ids (a: one per generation; b: the one scancel'ed)
#     and, Slurm keeping no accounting here, one note line saying so; logs reads a's rank
#     logs from the shared directory (--tail, -o json naming its Slurm job and output file);
#   - another user's Slurm job (nobody's, on the t4 node) is untouched and its node is
#     never given to sia's jobs; `sia-ctl nodes` shows Slurm's nodes, that one not offered
#     (another job holds one of its GPUs), the others offered;
#   - with slurmctld stopped, a round says "slurmctld not reachable" in one line, exits 69
#     and changes no job's state, nodes exits 69; logs still reads a's rank log from the shared directory,
#     with one note line that Slurm was not asked.
# Skips (77) without root, slurm-wlm or munge.
#   ctl_slurm_cron.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/slurm.sh"
. "$E2E_LIB/job_history.sh"
slurm_bed n1:a100:2 n2:a100:2 n3:t4:2 n4:rtx2080ti:2
ST=$tmp/state
SH=$tmp/shared
export SIA_RENDEZVOUS_TIMEOUT=60
cat >config.toml <<TOML
[controller]
state_dir = "$ST"
cluster = "$tmp/cluster.toml"
retention = 500
time_limit = 1
TOML
slurm_sia_section "$SH" >>config.toml
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
on_fail() {
  ctl status
  squeue -o "%i %j %u %T %N %b"
}
logs "$SH/nodes/*/jobs/*/logs/rank-0.log" "$SH/slurm/*/slurm-*.out"
ctl slurm-cluster --write cluster.toml || fail "slurm-cluster"
STEPS=10000
job() {
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = $2
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "$STEPS"]
TOML
}
job a 4
job b 1
# Another user's job on the t4 node: never touched, its node never sia's.
other=$(sbatch --parsable --uid=nobody --chdir=/tmp -o /dev/null -w n3 --gres=gpu:t4:1 \
  --comment=sia:a:1 -J sia.a.1 --wrap 'sleep 3000') || fail "sbatch as nobody"
slurm_wait_job "$other" RUNNING
ctl submit a.toml >/dev/null || fail "submit a"

placed() {  # placed JOB: "TYPE NODE:GPUS..." of JOB in the last round's placement
  ls "$ST"/rounds/r*-placement.json | tail -n 1 | xargs cat | json_eval - \
    "next((' '.join([j['gpu_type']] + ['%s:%d' % (n['name'], len(n['gpus'])) for n in j['nodes']]) for j in d['data']['jobs'] if j['name'] == '$1'), '')" 2>/dev/null
}
running_in_slurm() { squeue -h -u root -n "$1" -t R -o %i | grep -q .; }
phase=grow
i=0
start=$(date +%s)
while :; do
  i=$((i + 1))
  ctl -o json round >"round-$i.json" 2>"round-$i.err" || { cat "round-$i.err"; fail "round $i exited $?"; }
  now=$(placed a)
  echo "round $i ($(($(date +%s) - start)) s): a on ${now:-nothing}"
  case "$phase:$now" in
  grow:"a100 n1:2 n2:2" | grow:"a100 n2:2 n1:2")
    phase=moved
    slurm_node_drain n1
    slurm_node_drain n2
    ;;
  moved:rtx2080ti*)
    phase=cancel
    scontrol update NodeName=n1,n2 State=RESUME || fail "resume n1, n2"
    ctl submit b.toml >/dev/null || fail "submit b"
    ;;
  esac
  if [ "$phase" = cancel ] && running_in_slurm "$(squeue -h -u root -o %j | grep '^sia\.b\.' | head -n 1)"; then
    bid=$(squeue -h -u root -o '%i %j' | awk '$2 ~ /^sia\.b\./ { print $1; exit }')
    scancel "$bid" || fail "scancel b"
    phase=end
  fi
  a=$(job_state a)
  [ "$phase" = end ] && [ "$a" = finished ] && [ "$(job_state b)" = cancelled ] && break
  [ "$a" = finished ] && [ "$phase" != end ] && fail "a finished before the test's phase $phase"
  [ $(($(date +%s) - start)) -gt 420 ] && fail "not done after 420 s ($i rounds, phase $phase)"
  sleep 1  # the rounds' pace (a poll: the loop ends on the jobs' states)
done
echo "done after $i rounds, $(($(date +%s) - start)) s"
# a: 1 GPU, 4 across two nodes, another type; every generation after the first restored.
cat "$ST"/rounds/r*-placement.json | json_eval - \
  "sorted({sum(len(n['gpus']) for n in j['nodes']) for p in docs for j in p['data']['jobs'] if j['name'] == 'a'})" >counts
grep -q "^\[1,.*4\]$" counts || fail "a's GPU counts: $(cat counts)"
"$E2E_PY" - "$SH" "$STEPS" <<'PY' || fail "a's generations"
import glob, re, sys
sh, steps = sys.argv[1], int(sys.argv[2])
gens = {}  # generation -> the restored step its rank 0 printed (None: none)
worlds = set()  # the world sizes a's rank 0 started in
for f in glob.glob(sh + "/nodes/*/jobs/a/logs/rank-0.log"):
    gen = None
    for line in open(f, errors="replace"):
        m = re.match(r"==== sia-run: .* job a round (\d+) rank 0/(\d+) ", line)
        if m:
            gen = int(m.group(1))
            worlds.add(int(m.group(2)))
            gens.setdefault(gen, None)
        m = re.search(r"restored step (\d+)", line)
        if m and gen is not None and gens[gen] is None:
            gens[gen] = int(m.group(1))
if len(gens) < 3:
    sys.exit("a ran %d generations, expected 3 or more: %s" % (len(gens), gens))
bad = {g: s for g, s in gens.items() if g > 1 and not s}
if bad or gens.get(1) is not None:
    sys.exit("generations not resumed from a checkpoint: %s (all: %s)" % (bad, gens))
if 1 not in worlds or 4 not in worlds:
    sys.exit("a's ranks never ran on 1 and on 4 GPUs: world sizes %s" % sorted(worlds))
print("a's generations and restored steps:", dict(sorted(gens.items())), "world sizes",
      sorted(worlds))
PY
max=$(max_step "$SH"/nodes/*/jobs/a/reports.jsonl)
[ "$max" = "$STEPS" ] || fail "a reached step $max, not $STEPS"
grep -q "rtx2080ti" "$ST"/rounds/r*-placement.json || fail "a never moved to rtx2080ti"
# nodes: Slurm's live nodes; n3, where nobody's job holds a GPU, not offered, and why.
ctl -o json nodes >nodes.json || fail "nodes -o json"
json_check "nodes from Slurm: n3 held by another job, not offered; the others offered" nodes.json \
  "d['kind'] == 'SlurmNodeList' and [n['name'] for n in d['data']['nodes']] == ['n1', 'n2', 'n3', 'n4'] and [(n['offered'], n['gpus_other'], n['why']) for n in d['data']['nodes'] if n['name'] == 'n3'] == [(False, 1, 'other jobs hold 1 of its GPUs')] and all(n['offered'] and n['gpus'] == 2 for n in d['data']['nodes'] if n['name'] != 'n3') and [n['gpu_type'] for n in d['data']['nodes']] == ['a100', 'a100', 't4', 'rtx2080ti']"
ctl nodes >nodes.txt || fail "nodes"
grep -q "n3 .* no .*other jobs hold 1 of its GPUs" nodes.txt || fail "nodes: $(cat nodes.txt)"
# nobody's job: untouched, its node never placed.
[ "$(slurm_job_state "$other")" = RUNNING ] || fail "nobody's job is $(slurm_job_state "$other")"
! grep -l '"n3"' "$ST"/rounds/r*-placement.json | grep -q . || fail "a placement used n3"
# b: cancelled, in status and history.
ctl status b | grep -q "cancelled" || fail "status b: $(ctl status b)"
ctl history --state cancelled >hist.txt 2>&1 || { cat hist.txt; fail "history"; }
grep -q "^b .*cancelled" hist.txt || fail "history --state cancelled: $(cat hist.txt)"
# history: each generation's Slurm job id beside sia's figures; no accounting here: one note.
ctl -o json history >hist.json || fail "history -o json"
json_check "a's Slurm jobs: one per generation, 3 or more, distinct ids" hist.json \
  "[len(j['slurm']) >= 3 and len({g['slurm_job'] for g in j['slurm']}) == len(j['slurm']) and [g['generation'] for g in j['slurm']] == sorted({g['generation'] for g in j['slurm']}) for j in d['data']['jobs'] if j['name'] == 'a'] == [True]"
json_check "b's Slurm job is the one scancel'ed ($bid)" hist.json \
  "[g['slurm_job'] for j in d['data']['jobs'] if j['name'] == 'b' for g in j['slurm']] == [$bid]"
json_check "no sacct figures without accounting, and a note saying so" hist.json \
  "all(g['state'] is None and g['elapsed'] is None for j in d['data']['jobs'] for g in j['slurm']) and 'accounting storage is disabled' in d['data']['slurm_note']"
ctl history >hist.txt 2>hist.err || { cat hist.err; fail "history"; }
[ "$(grep -c '^note: ' hist.txt)" -eq 1 ] && tail -n 1 hist.txt | grep -q "^note: Slurm keeps no accounting here" ||
  fail "history's note: $(cat hist.txt)"
grep -q "^b .* $bid\$" hist.txt || fail "history does not show b's Slurm job $bid: $(cat hist.txt)"
# logs: a rank's log from the shared directory, as under agents.
ctl logs a --tail 3 >logs.txt 2>logs.err || { cat logs.err; fail "logs a --tail 3"; }
[ "$(wc -l <logs.txt)" -eq 3 ] || fail "logs a --tail 3: $(cat logs.txt)"
ctl logs a >all.txt 2>logs.err || { cat logs.err; fail "logs a"; }
alastgen=$(json_eval hist.json "[j['slurm'][-1]['generation'] for j in d['data']['jobs'] if j['name'] == 'a'][0]")
grep -q "==== sia-run: .* job a round $alastgen rank 0/" all.txt ||
  fail "logs a: no start of its last generation ($alastgen): $(tail -n 5 all.txt)"
ctl -o json logs a >log0.json || fail "logs a -o json"
alast=$(json_eval hist.json "[j['slurm'][-1]['slurm_job'] for j in d['data']['jobs'] if j['name'] == 'a'][0]")
json_check "a's JobLog names its last Slurm job ($alast) and Slurm's output file" log0.json \
  "d['data']['slurm_job'] == $alast and d['data']['slurm_output'] == '$SH/slurm/a/slurm-$alast.out' and d['data']['rank'] == 0 and 'rank 0/' in d['data']['text']"
ctl logs zz >out 2>err.txt
[ $? -eq 66 ] || fail "logs of an unknown job did not exit 66: $(cat err.txt)"
# slurmctld stopped: the round says so, exits 69, and the state is as it was.
ctl -o json status >before.json || fail "status"
kill "$(cat "$SLURM_BED/run/slurmctld.pid")"
wait_for 60 "slurmctld stopped" sh -c '! scontrol ping 2>/dev/null | grep -q "is UP"'
ctl round >out 2>err.txt
[ $? -eq 69 ] || { cat err.txt; fail "a round without slurmctld did not exit 69"; }
grep -q "error: no node answered: slurm: slurmctld not reachable (scontrol: " err.txt ||
  fail "round: $(cat err.txt)"
[ "$(wc -l <err.txt)" -eq 1 ] || fail "slurmctld down should be one line: $(cat err.txt)"
ctl -o json status >after.json || fail "status after"
json_eval before.json '[(j["name"], j["state"]) for j in d["data"]["jobs"]]' >b.txt
json_eval after.json '[(j["name"], j["state"]) for j in d["data"]["jobs"]]' >a.txt
cmp -s b.txt a.txt || fail "the state changed without slurmctld: $(cat b.txt) / $(cat a.txt)"
ctl nodes >out 2>err.txt
[ $? -eq 69 ] || fail "nodes without slurmctld did not exit 69: $(cat err.txt)"
# logs without slurmctld: read from the shared storage all the same, one note line.
ctl logs a --tail 2 >logs.txt 2>logs.err || { cat logs.err; fail "logs a without slurmctld"; }
[ "$(wc -l <logs.txt)" -eq 2 ] || fail "logs a --tail 2 without slurmctld: $(cat logs.txt)"
[ "$(wc -l <logs.err)" -eq 1 ] && grep -q "^note: the last round found .* down (.*slurmctld not reachable.*): Slurm was not asked; read from shared storage$" logs.err ||
  fail "logs without slurmctld: $(cat logs.err)"
ctl -o json logs a >logd.json || fail "logs a -o json without slurmctld"
json_check "the JobLog says Slurm was not asked" logd.json "'Slurm was not asked' in d['data']['note'] and 'rank 0/' in d['data']['text']"
echo "ok"
