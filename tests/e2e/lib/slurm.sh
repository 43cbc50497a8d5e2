# A real Slurm on this one machine for the e2e scripts that need one, sourced after
# lib/harness.sh (not a test itself: the e2e tests are tests/e2e/*.sh). Debian's slurm-wlm
# and munge; see /work/shared/design/slurm-on-one-machine.md for what was seen to work.
# It promises:
#   slurm_bed NODE:TYPE:GPUS...  skips (status 77, one line) when not root or slurm-wlm or
#              munge is missing; otherwise starts, in a private directory of its own
#              (SLURM_BED, mode 0755 so another user's job can reach the munge socket),
#              its own munged (own key and socket), one slurmctld and one slurmd per node
#              (`slurmd -N NODE`: emulated nodes, each its own port), on free ports, with
#              partition SLURM_BED_PARTITION (default "sia") holding every node, typed GPUs
#              declared per node (GresTypes=gpu, Gres=gpu:TYPE:GPUS, gres.conf File= links
#              to /dev/null: no devices needed), 4 CPUs a node whatever the machine has
#              (config_overrides: jobs of several users share a node), cons_tres, no
#              cgroups; exports SLURM_CONF;
#              returns once every node is idle. At exit (harness's at_exit) every job is
#              cancelled, every daemon ended and the directory removed.
#   slurm_wait_idle [SECONDS]     until every node of the bed is idle (default 120 s);
#   slurm_job_state JOB           prints the job's state (RUNNING, PENDING...), empty once
#                                 Slurm forgot it;
#   slurm_wait_job JOB STATE [SECONDS]  until the job is in STATE (default 120 s);
#   slurm_node_drain NODE         drains NODE (reason "e2e");
#   slurm_ctld_stop               stops the bed's slurmctld (SIGTERM) and waits until it no
#                                 longer answers; its state (jobs) is kept for the next start;
#   slurm_ctld_start              starts it again on the same state and waits until it
#                                 answers (the slurmd and their jobs ran on meanwhile);
#   slurm_cancel_all              cancels every job of the bed and waits until none is left;
#   slurm_sia_section SHARED [GRACE]  prints the [slurm] section of a sia-config(5) whose
#                                 rounds go through this bed: its configuration and
#                                 partition, shared_dir SHARED, grace_seconds GRACE
#                                 (default 60), reports every 0.5 s.
# The Slurm commands (sbatch, squeue, scontrol, scancel, sinfo) run as they are: SLURM_CONF
# names the bed's configuration. Nothing here depends on a Slurm already running, nor
# touches one (private ports, state, spool and munge socket).
# Not thread-safe in any sense: one script, one shell.

SLURM_BED_PARTITION=${SLURM_BED_PARTITION:-sia}

# _slurm_free_port BASE COUNT: succeeds when no listener holds BASE..BASE+COUNT-1.
_slurm_free_ports() {
  _sfp_i=0
  while [ "$_sfp_i" -lt "$2" ]; do
    ss -Hltn "sport = :$(($1 + _sfp_i))" 2>/dev/null | grep -q . && return 1
    _sfp_i=$((_sfp_i + 1))
  done
  return 0
}

_slurm_munge_up() { munge -S "$SLURM_BED/munge/sock" -n 2>/dev/null | unmunge -S "$SLURM_BED/munge/sock" >/dev/null 2>&1; }
_slurm_ping() { scontrol ping 2>/dev/null | grep -q "is UP"; }

slurm_all_idle() {
  _sai_out=$(sinfo -h -N -o "%t" 2>/dev/null) || return 1
  [ -n "$_sai_out" ] && ! printf '%s\n' "$_sai_out" | grep -qv '^idle$'
}

slurm_wait_idle() { wait_for "${1:-120}" "the Slurm bed's nodes idle ($(sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' '))" slurm_all_idle; }

slurm_job_state() { squeue -h -j "$1" -o "%T" 2>/dev/null | head -n 1; }

_slurm_job_is() { [ "$(slurm_job_state "$1")" = "$2" ]; }
slurm_wait_job() { wait_for "${3:-120}" "Slurm job $1 $2 (it is: $(slurm_job_state "$1"))" _slurm_job_is "$1" "$2"; }

slurm_node_drain() { scontrol update "NodeName=$1" State=DRAIN Reason=e2e; }

_slurm_ctld_pid=
_slurm_ctld_start() {
  /usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >>"$SLURM_BED/log/slurmctld.out" 2>&1 &
  _slurm_ctld_pid=$!
  _slurm_pids="$_slurm_pids $!"
}
_slurm_not_answering() { ! _slurm_ping; }
# _slurm_alive PID: the process runs (an exited child not yet waited for is a zombie).
_slurm_alive() {
  case $(ps -o stat= -p "$1" 2>/dev/null) in "" | Z*) return 1 ;; esac
}
_slurm_ctld_settled() { _slurm_ping || ! _slurm_alive "$_slurm_ctld_pid"; }
slurm_ctld_stop() {
  kill -TERM "$_slurm_ctld_pid" 2>/dev/null
  wait "$_slurm_ctld_pid" 2>/dev/null
  wait_for 60 "the bed's slurmctld stopped" _slurm_not_answering
}
slurm_ctld_start() {
  _slurm_ctld_start
  wait_for 120 "the bed's slurmctld answering again" _slurm_ping
}

_slurm_no_jobs() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
slurm_cancel_all() {
  scancel --partition="$SLURM_BED_PARTITION" --full >/dev/null 2>&1
  _sca_end=$(($(date +%s) + 30))
  until _slurm_no_jobs || [ "$(date +%s)" -ge "$_sca_end" ]; do sleep 0.2; done
}

slurm_sia_section() {
  cat <<EOF
[slurm]
enabled = true
conf = "$SLURM_CONF"
partition = "$SLURM_BED_PARTITION"
shared_dir = "$1"
grace_seconds = ${2:-60}
report_interval = 0.5
EOF
}

_slurm_skip_unless_able() {
  [ "$(id -u)" -eq 0 ] || skip "a private Slurm needs root (run this test as root)"
  for _ssu in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged sbatch squeue scontrol \
    scancel sinfo munge ss; do
    command -v "$_ssu" >/dev/null 2>&1 || skip "no $_ssu: install slurm-wlm and munge"
  done
}

# _slurm_write_conf DIR CTLD_PORT NODE_BASE SPEC...: slurm.conf and gres.conf into DIR.
_slurm_write_conf() {
  _swc_dir=$1 _swc_ctld=$2 _swc_port=$3
  shift 3
  cat >"$_swc_dir/slurm.conf" <<EOF
ClusterName=siabed
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$_swc_ctld
SlurmdPort=$((_swc_ctld + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$_swc_dir/munge/sock
CredType=cred/munge
StateSaveLocation=$_swc_dir/state
SlurmdSpoolDir=$_swc_dir/spool/%n
SlurmctldPidFile=$_swc_dir/run/slurmctld.pid
SlurmdPidFile=$_swc_dir/run/slurmd.%n.pid
SlurmctldLogFile=$_swc_dir/log/slurmctld.log
SlurmdLogFile=$_swc_dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=60
SlurmdTimeout=120
MessageTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
EOF
  : >"$_swc_dir/gres.conf"
  _swc_nodes=
  for _swc_spec in "$@"; do
    _swc_name=${_swc_spec%%:*}
    _swc_rest=${_swc_spec#*:}
    _swc_type=${_swc_rest%%:*}
    _swc_gpus=${_swc_rest#*:}
    mkdir -p "$_swc_dir/dev/$_swc_name" "$_swc_dir/spool/$_swc_name"
    _swc_i=0
    while [ "$_swc_i" -lt "$_swc_gpus" ]; do
      ln -s /dev/null "$_swc_dir/dev/$_swc_name/gpu$_swc_i"
      _swc_i=$((_swc_i + 1))
    done
    echo "NodeName=$_swc_name NodeHostname=localhost NodeAddr=127.0.0.1 Port=$_swc_port" \
      "CPUs=4 Gres=gpu:$_swc_type:$_swc_gpus State=UNKNOWN" >>"$_swc_dir/slurm.conf"
    echo "NodeName=$_swc_name Name=gpu Type=$_swc_type" \
      "File=$_swc_dir/dev/$_swc_name/gpu[0-$((_swc_gpus - 1))]" >>"$_swc_dir/gres.conf"
    _swc_nodes="$_swc_nodes${_swc_nodes:+,}$_swc_name"
    _swc_port=$((_swc_port + 1))
  done
  echo "PartitionName=$SLURM_BED_PARTITION Nodes=$_swc_nodes Default=YES MaxTime=INFINITE" \
    "State=UP OverSubscribe=NO" >>"$_swc_dir/slurm.conf"
}

# Backstop for jobs Slurm could not cancel (slurmctld gone): every slurmstepd started
# with the bed's SLURM_CONF, and every process under it, gets SIGKILL.
_slurm_kill_steps() {
  _sks_steps=
  for _sks_d in /proc/[0-9]*; do
    [ "$(cat "$_sks_d/comm" 2>/dev/null)" = slurmstepd ] || continue
    tr '\0' '\n' <"$_sks_d/environ" 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_BED/slurm.conf" &&
      _sks_steps="$_sks_steps ${_sks_d#/proc/}"
  done
  [ -n "$_sks_steps" ] || return 0
  # The steps and their descendants, parents first.
  ps -eo pid=,ppid= | awk -v roots="$_sks_steps" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2; pids[NR] = $1 }
    END { do { more = 0; for (i in pids) { p = pids[i]
            if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; more = 1 } } } while (more)
          for (p in keep) print p }' | xargs -r kill -KILL 2>/dev/null
}

_slurm_pids=
# Every job cancelled, then every daemon ended (SIGTERM, SIGKILL after 5 s), then what is
# left of the jobs killed, then the directory removed.
_slurm_teardown() {
  [ -n "${SLURM_BED:-}" ] || return 0
  _slurm_ping && slurm_cancel_all
  for _st_p in $_slurm_pids; do kill -TERM "$_st_p" 2>/dev/null; done
  for _st_p in $_slurm_pids; do
    _st_n=0
    while kill -0 "$_st_p" 2>/dev/null && [ "$_st_n" -lt 25 ]; do
      sleep 0.2
      _st_n=$((_st_n + 1))
    done
    kill -KILL "$_st_p" 2>/dev/null
    wait "$_st_p" 2>/dev/null
  done
  _slurm_kill_steps
  rm -rf "$SLURM_BED"
}

slurm_bed() {
  _slurm_skip_unless_able
  [ $# -ge 1 ] || fail "slurm_bed: no nodes"
  SLURM_BED=$(mktemp -d /tmp/sia-slurm-bed.XXXXXX) || fail "slurm_bed: mktemp"
  chmod 755 "$SLURM_BED"
  mkdir -p "$SLURM_BED/munge" "$SLURM_BED/key" "$SLURM_BED/state" "$SLURM_BED/log" \
    "$SLURM_BED/run"
  chmod 755 "$SLURM_BED/munge"
  chmod 700 "$SLURM_BED/key"
  at_exit _slurm_teardown
  logs "$SLURM_BED/log/*.log"
  dd if=/dev/urandom of="$SLURM_BED/key/munge.key" bs=1024 count=1 2>/dev/null ||
    fail "slurm_bed: munge key"
  chmod 400 "$SLURM_BED/key/munge.key"
  /usr/sbin/munged -F -f --socket="$SLURM_BED/munge/sock" \
    --key-file="$SLURM_BED/key/munge.key" --log-file="$SLURM_BED/log/munged.log" \
    --pid-file="$SLURM_BED/run/munged.pid" --seed-file="$SLURM_BED/run/munged.seed" >>"$SLURM_BED/log/munged.out" 2>&1 &
  _slurm_pids="$_slurm_pids $!"
  wait_for 60 "the bed's munged answering" _slurm_munge_up
  # Free ports: the controller's pair and one per node, from a base below the kernel's
  # ephemeral range (a client's connection elsewhere cannot take them between the check
  # and the bind); a slurmctld that still found its port taken (another bed, a listener
  # started meanwhile) exits at once: the next base is tried.
  export SLURM_CONF="$SLURM_BED/slurm.conf"
  _sb_try=0
  while :; do
    _sb_try=$((_sb_try + 1))
    [ "$_sb_try" -le 50 ] || fail "slurm_bed: no free ports"
    _sb_base=$((10000 + ($$ * 7 + _sb_try * 131) % 22000))
    _slurm_free_ports "$_sb_base" $(($# + 2)) || continue
    _slurm_write_conf "$SLURM_BED" "$_sb_base" $((_sb_base + 2)) "$@"
    _slurm_ctld_start
    wait_for 120 "the bed's slurmctld answering" _slurm_ctld_settled
    _slurm_ping && break
    wait "$_slurm_ctld_pid" 2>/dev/null
    grep -q "Address already in use" "$SLURM_BED/log/slurmctld.log" 2>/dev/null ||
      fail "slurm_bed: slurmctld exited at its start"
    mv "$SLURM_BED/log/slurmctld.log" "$SLURM_BED/log/slurmctld.port-taken.$_sb_try"
  done
  for _sb_spec in "$@"; do
    /usr/sbin/slurmd -D -f "$SLURM_CONF" -N "${_sb_spec%%:*}" \
      >>"$SLURM_BED/log/slurmd.${_sb_spec%%:*}.out" 2>&1 &
    _slurm_pids="$_slurm_pids $!"
  done
  slurm_wait_idle 120
}
