#!/bin/sh
# The daemon (`sia-ctl serve`) realising its rounds through a real Slurm (lib/slurm.sh: four
# emulated nodes of three GPU types, [slurm] enabled, no sia agent anywhere), with four
# reference-worker jobs and one sia.torch job on the CPU:
#   - job a starts alone on one GPU and is rescaled to 4 GPUs across two nodes; the a100
#     nodes are then drained: a moves to another GPU type, and b, c and d share the four
#     GPUs left: jobs are preempted and resumed;
#   - the daemon is killed (kill -9) right after its K-th sbatch or scancel of that phase
#     (K drawn from SIA_SLURM_SERVE_SEED: printed, to replay a failure) by a wrapper around
#     the Slurm commands in slurm.bin_dir, and started again on the same state;
#   - slurmctld is stopped: the daemon says so, one line a round, and still answers status;
#     slurmctld is started again and the rounds carry on;
#   - the a100 nodes come back and t (sia.torch) is submitted; t, and b unless it has
#     finished, are held once they train (checkpoint-stopped) and released (resumed); every
#     job runs to its end.
# Checked from the workers' own timeline (lib/timeline.sh: every rank is started through a
# wrapper that logs its start and end): no two generations of a job overlap, nothing of a
# job started after it finished, each finished once; every job finished exactly at its
# step limit (reports, and status agrees); every generation that trained after one that
# trained restored a checkpoint first (its rank 0 says "restored step N", N > 0): none
# started over from step 0.
# Skips (77) without root, slurm-wlm, munge or torch.
#   ctl_slurm_serve.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/slurm.sh"
. "$E2E_LIB/job_history.sh"
. "$E2E_LIB/timeline.sh"
need_torch
SEED=${SIA_SLURM_SERVE_SEED:-$(($$ % 1000))}
KILL_AT=$((1 + SEED % 3))
echo "seed $SEED: the daemon is killed after its sbatch or scancel number $KILL_AT"
slurm_bed n1:a100:2 n2:a100:2 n3:t4:2 n4:rtx2080ti:2
ST=$tmp/state
SH=$tmp/shared
export SIA_RENDEZVOUS_TIMEOUT=60
ctl_pid=
# The Slurm commands the daemon runs, through wrappers: sbatch and scancel run for real,
# then, once armed, the K-th of them kills the daemon (not the batch scripts' own scancel:
# only a call whose parent is the daemon counts).
mkdir -p "$tmp/slurm-bin"
for c in scontrol squeue sinfo sbatch scancel; do
  real=$(command -v "$c") || fail "no $c"
  case $c in
  sbatch | scancel)
    cat >"$tmp/slurm-bin/$c" <<EOF
#!/bin/sh
"$real" "\$@"
st=\$?
if [ -f "$tmp/kill.armed" ] && [ "\$PPID" = "\$(cat "$tmp/ctl.pid" 2>/dev/null)" ]; then
  echo "$c \$*" >>"$tmp/kill.calls"
  if [ "\$(wc -l <"$tmp/kill.calls")" -ge "\$(cat "$tmp/kill.armed")" ]; then
    rm -f "$tmp/kill.armed"
    echo "killed after: $c \$*" >"$tmp/kill.done"
    kill -9 "\$PPID"
  fi
fi
exit \$st
EOF
    ;;
  *) printf '#!/bin/sh\nexec "%s" "$@"\n' "$real" >"$tmp/slurm-bin/$c" ;;
  esac
  chmod 0755 "$tmp/slurm-bin/$c"
done
cat >config.toml <<TOML
[controller]
state_dir = "$ST"
cluster = "$tmp/cluster.toml"
bind = "ipc://$tmp/run/ctl"
round = 2
retention = 500
time_limit = 1
[slurm]
enabled = true
conf = "$SLURM_CONF"
bin_dir = "$tmp/slurm-bin"
partition = "$SLURM_BED_PARTITION"
shared_dir = "$SH"
grace_seconds = 30
report_interval = 0.5
[client]
connect = "ipc://$tmp/run/ctl"
TOML
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
on_fail() {
  echo "seed $SEED"
  ctl status
  squeue -o "%i %j %u %T %N %b"
  echo "--- events"
  tail -30 "$tmp/events.log"
}
logs "$tmp/ctl-*.log" "$SH/nodes/*/jobs/*/logs/rank-0.log" "$SH/slurm/*/slurm-*.out"
ctl slurm-cluster --write cluster.toml || fail "slurm-cluster"
timeline_wrapper "$tmp/wrap.sh" "$tmp/events.log"
STEPS=2500
T_STEPS=400
job() {
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = $2
command = ["$tmp/wrap.sh", "$BIN/sia-worker", "--device", "cpu", "--steps", "${3:-$STEPS}"]
TOML
}
A_STEPS=$((STEPS * 2))  # a outlasts every phase of the test
job a 4 "$A_STEPS"
job b 1
job c 1
job d 1
cat >t.toml <<TOML
name = "t"
model = "cifar10"
max_gpus = 1
max_batch_size = 256
command = ["$tmp/wrap.sh", "$PY", "$SRC/examples/pytorch/cifar_cnn_sia.py", "--epochs", "1000",
           "--steps", "$T_STEPS", "--dataset-size", "256"]
TOML

n_logs=0
start_ctl() {
  n_logs=$((n_logs + 1))
  "$BIN/sia-ctl" --config config.toml serve >"ctl-$n_logs.log" 2>&1 &
  ctl_pid=$!
  echo "$ctl_pid" >ctl.pid
  started "$ctl_pid"
  wait_for 30 "serve did not start" grep -q "serving " "ctl-$n_logs.log"
}
start_ctl
ctl submit a.toml >/dev/null || fail "submit a"

placed() {  # placed JOB: "TYPE NODE:GPUS..." of JOB in the last round's placement
  ls "$ST"/rounds/r*-placement.json 2>/dev/null | tail -n 1 | xargs -r cat | json_eval - \
    "next((' '.join([j['gpu_type']] + ['%s:%d' % (n['name'], len(n['gpus'])) for n in j['nodes']]) for j in d['data']['jobs'] if j['name'] == '$1'), '')" 2>/dev/null
}
on_four() { case $(placed a) in "a100 n1:2 n2:2" | "a100 n2:2 n1:2") return 0 ;; esac; return 1; }
start=$(date +%s)
wait_for 120 "a never on 4 GPUs of n1 and n2 (on: $(placed a))" on_four
echo "a on 4 GPUs after $(($(date +%s) - start)) s"
slurm_node_drain n1
slurm_node_drain n2
for j in b c d; do ctl submit "$j.toml" >/dev/null || fail "submit $j"; done
: >kill.calls
echo "$KILL_AT" >kill.armed  # from here on, the K-th sbatch or scancel kills the daemon
killed() { [ -f kill.done ]; }
wait_for 120 "the daemon was never killed ($(wc -l <kill.calls) calls)" killed
wait "$ctl_pid" 2>/dev/null
echo "$(cat kill.done) ($(($(date +%s) - start)) s); started again"
start_ctl
moved() { case $(placed a) in t4* | rtx2080ti*) return 0 ;; esac; return 1; }
wait_for 120 "a never moved off the a100 nodes (on: $(placed a))" moved
echo "a moved to $(placed a) after $(($(date +%s) - start)) s"
round_after() { grep -q "round [0-9]*: .* placed" "ctl-$n_logs.log"; }
wait_for 60 "no round after the restart" round_after

# slurmctld stopped: the rounds say so in one line each, the daemon answers status.
slurm_ctld_stop
outage() { grep -q "slurmctld not reachable" "ctl-$n_logs.log"; }
wait_for 90 "the daemon never said slurmctld is not reachable" outage
ctl -o json status >outage.json || fail "status while slurmctld is down"
grep "slurmctld not reachable" "ctl-$n_logs.log" | head -n 3
! grep -q "is down: slurm" "ctl-$n_logs.log" || fail "a line per node: $(grep 'is down' "ctl-$n_logs.log" | head -n 3)"
slurm_ctld_start
lines=$(wc -l <"ctl-$n_logs.log")
carried_on() { tail -n +"$((lines + 1))" "ctl-$n_logs.log" | grep -q "round [0-9]*: .* placed"; }
wait_for 60 "no round after slurmctld came back" carried_on
# (a restarted slurmctld may have them back undrained already)
resumed() {
  scontrol update NodeName=n1,n2 State=RESUME 2>/dev/null ||
    ! sinfo -h -N -n n1,n2 -o %t | grep -q "drain\|drng"
}
wait_for 60 "n1 and n2 never resumed: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')" resumed
echo "slurmctld back after $(($(date +%s) - start)) s"

# An operator's preemption: a job held once it trains (its Slurm job checkpoint-stopped),
# released once Slurm has ended it: it resumes from its checkpoint. t is submitted only now,
# so that it runs after slurmctld's outage (which may outlast a whole run of it); b may have
# run to its end on the GPUs left before it (then its hold is refused, and said).
ctl submit t.toml >/dev/null || fail "submit t"
trained() { [ "$(max_step "$SH"/nodes/*/jobs/"$1"/reports.jsonl)" -gt 0 ] 2>/dev/null; }
not_in_slurm() { ! squeue -h -o %j | grep -q "^sia\.$1\."; }
# preempt JOB: hold, wait until Slurm has ended JOB's job, release. JOB having trained to its
# end before the hold or the release reached it (a fast machine) is said, not failed: the
# check at the end wants some job preempted and resumed.
preempt() {
  if ! ctl hold "$1" >/dev/null 2>request.err; then
    ended_first "$1" hold
    return
  fi
  wait_for 120 "$1 still in Slurm after the hold: $(squeue -h -o '%j %T' | tr '\n' ' ')" \
    not_in_slurm "$1"
  if ! ctl release "$1" >/dev/null 2>request.err; then
    ended_first "$1" release
    return
  fi
  echo "$1 held and released after $(($(date +%s) - start)) s"
}
ended_first() {
  grep -q "has ended (finished)" request.err || fail "$2 $1: $(cat request.err)"
  echo "$1 finished before its $2 took it"
}
wait_for 120 "b never trained" trained b
preempt b
wait_for 120 "t never trained" trained t
preempt t

all_finished() {
  ctl -o json status >status.json 2>/dev/null &&
    [ "$(json_eval status.json 'count(d["data"]["jobs"], state="finished")')" = 5 ]
}
wait_for 240 "not every job finished: $(ctl status 2>&1 | tail -n 6)" all_finished
echo "all finished after $(($(date +%s) - start)) s"
kill -TERM "$ctl_pid"
wait "$ctl_pid"
ctl_pid=

timeline_check events.log
steps_check status.json "$A_STEPS" "$SH/nodes/*/jobs/%s/reports.jsonl" a
steps_check status.json "$STEPS" "$SH/nodes/*/jobs/%s/reports.jsonl" b c d
steps_check status.json "$T_STEPS" "$SH/nodes/*/jobs/%s/reports.jsonl" t
# status agrees: each job's step there is its limit.
json_check "status's steps" status.json \
  "[j['step'] for j in sorted(d['data']['jobs'], key=lambda j: j['name'])] == [$A_STEPS, $STEPS, $STEPS, $STEPS, $T_STEPS]"
"$E2E_PY" - "$SH" <<'PY' || fail "generations not resumed from a checkpoint"
import glob, json, re, sys
sh = sys.argv[1]
bad, seen = [], {}
for job in "abcdt":
    gens = {}  # generation -> the step its rank 0 restored (None: none said)
    for f in glob.glob(sh + "/nodes/*/jobs/%s/logs/rank-0.log" % job):
        gen = None
        for line in open(f, errors="replace"):
            m = re.match(r"==== sia-run: .* job %s round (\d+) rank 0/" % job, line)
            if m:
                gen = int(m.group(1))
                gens.setdefault(gen, None)
            m = re.search(r"restored step (\d+)", line)
            if m and gen is not None and gens[gen] is None:
                gens[gen] = int(m.group(1))
    reached = {}  # generation -> the highest step it reported
    for f in glob.glob(sh + "/nodes/*/jobs/%s/reports.jsonl" % job):
        for line in open(f):
            try:
                r = json.loads(line)
                reached[r["round"]] = max(reached.get(r["round"], 0), r["step"])
            except (ValueError, KeyError, TypeError):
                pass
    # A generation that trains after one that trained (so left a checkpoint) restored a
    # step > 0 first (one stopped before it restored anything trained nothing).
    for g, s in gens.items():
        if not s and reached.get(g, 0) > 0 and any(reached.get(e, 0) > 0 for e in gens if e < g):
            bad.append("%s generation %d restored %s" % (job, g, s))
    seen[job] = dict(sorted(gens.items()))
print("restored steps per generation:", seen)
if len(seen["a"]) < 3:
    bad.append("a ran %d generations, expected 3 or more" % len(seen["a"]))
if not any(len(seen[j]) > 1 for j in "bcdt"):
    bad.append("none of b, c, d, t was preempted and resumed")
if bad:
    sys.exit("; ".join(bad))
PY
grep -q "rtx2080ti\|\"t4\"" "$ST"/rounds/r*-placement.json || fail "a never moved type"
echo "ok: seed $SEED, $(($(date +%s) - start)) s"
