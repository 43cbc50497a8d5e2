#!/bin/sh
# How fast sia's decisions take effect through Slurm, against sia-run on the same machine
# (a benchmark: it prints figures and is never a timed test; bench/README.md keeps them).
# On the e2e Slurm bed (tests/e2e/lib/slurm.sh: emulated nodes n1, n2 of two a100 GPUs and
# n3 of four t4, this one machine), cron rounds (`sia-ctl round` in a loop, a round a
# second) and the reference worker on the CPU (a small model):
#   latency  from a round's decision (its placement file written) to every rank of the
#            job's new generation running (its start line in the rank's log), for one job
#            a of up to 4 GPUs as sia grows it: start (nothing -> 1 GPU), 1 -> 2, 2 -> 4
#            GPUs, and a type change (the nodes a runs on drained: it moves to the other type),
#            each through Slurm ([slurm] enabled) and through sia-run (the local node
#            commands, one sia-run state directory per node; no type change there: sia-run
#            has no drain);
#   cpu      the controller's CPU time (sia-ctl round and its children: user + system) per
#            round through Slurm with JOBS jobs submitted (ranks that only wait for their
#            SIGTERM), the first round (which takes the submissions in) apart, the median
#            of the rounds after it.
# SIA_BENCH_SMOKE=1: the start latency only, and cpu with 10 jobs over 3 rounds.
# Skips (77) without root, slurm-wlm or munge, as the e2e Slurm tests do.
#   bench/slurm_latency.sh BIN_DIR SOURCE_DIR [JOBS]     (JOBS default 100)
. "$2/tests/e2e/lib/harness.sh"
. "$E2E_LIB/slurm.sh"
JOBS=${3:-100}
ROUNDS=8
EVENTS="start 1->2 2->4 type"
if [ "${SIA_BENCH_SMOKE:-}" = 1 ]; then
  JOBS=10
  ROUNDS=3
  EVENTS="start"
fi
export SIA_RENDEZVOUS_TIMEOUT=60
slurm_bed n1:a100:2 n2:a100:2 n3:t4:4
logs "$tmp/*/slurm/*/slurm-*.out" "$tmp/*/nodes/*/jobs/*/logs/rank-0.log" "$tmp/*.err"
RS="$SRC/bench/rank_starts.py"

# config MODE DIR: DIR/config.toml for rounds through Slurm (slurm) or sia-run (sia-run).
config() {
  mkdir -p "$2"
  cat >"$2/config.toml" <<TOML
[controller]
state_dir = "$2/state"
cluster = "$tmp/cluster.toml"
retention = 500
time_limit = 1
TOML
  if [ "$1" = slurm ]; then
    cat >>"$2/config.toml" <<TOML
[slurm]
enabled = true
conf = "$SLURM_CONF"
partition = "$SLURM_BED_PARTITION"
shared_dir = "$2/shared"
grace_seconds = 60
report_interval = 0.5
TOML
  else
    cat >>"$2/config.toml" <<TOML
[nodes]
apply = ["sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node", "{node}",
         "--cluster", "{cluster}", "--jobs", "{jobs}", "--ckpt-root", "{state}/ckpt",
         "--report-interval", "0.5", "--grace", "60", "-o", "json", "-"]
TOML
  fi
}
config slurm "$tmp/slurm"
"$BIN/sia-ctl" --config "$tmp/slurm/config.toml" slurm-cluster --write "$tmp/cluster.toml" ||
  fail "slurm-cluster"
# sia-run's workers are its own processes, not Slurm's: stopped at exit whatever happened.
at_exit 'for n in n1 n2 n3; do [ -d "$tmp/sia-run/state/nodes/$n" ] && "$BIN/sia-run" --state-dir "$tmp/sia-run/state/nodes/$n" stop --grace 0 a; done'
cat >a.toml <<TOML
name = "a"
model = "cifar10"
max_gpus = 4
command = ["$BIN/sia-worker", "--device", "cpu", "--steps", "100000000", "--hidden", "16",
           "--layers", "1"]
TOML

# latency MODE: one job's rounds until every event of EVENTS was seen; a line per event.
latency() {
  d=$tmp/$1
  config "$1" "$d"
  ctl() { "$BIN/sia-ctl" --config "$d/config.toml" "$@"; }
  logs_glob="$d/state/nodes/*/jobs/a/logs/rank-*.log"  # sia-run's
  [ "$1" = slurm ] && logs_glob="$d/shared/nodes/*/jobs/a/logs/rank-*.log"
  ctl submit a.toml >/dev/null || fail "$1: submit a"
  want=$EVENTS
  [ "$1" = sia-run ] && want=$(echo "$EVENTS" | sed 's/ *type//')
  seen=
  drained=
  i=0
  prev=
  start=$(date +%s)
  while :; do
    i=$((i + 1))
    "$E2E_PY" "$RS" count a "$d/state" "$logs_glob" >"$d/before.json"
    ctl round >/dev/null 2>"$d/round-$i.err" || { cat "$d/round-$i.err"; fail "$1: round $i"; }
    "$E2E_PY" "$RS" wait a "$d/state" "$logs_glob" "$d/before.json" 120 >"$d/after.json" ||
      fail "$1: round $i: $(cat "$d/after.json")"
    now=$(json_get "$d/after.json" .shape)
    lat=$(json_get "$d/after.json" .latency)
    if [ "$lat" != null ]; then
      gp=$(echo "$prev" | awk '{ n = 0; for (i = 2; i <= NF; i++) { split($i, a, ":"); n += a[2] } print n }')
      gn=$(echo "$now" | awk '{ n = 0; for (i = 2; i <= NF; i++) { split($i, a, ":"); n += a[2] } print n }')
      ev="$gp->$gn"
      [ -z "$prev" ] && ev=start
      [ -n "$drained" ] && [ "${prev%% *}" != "${now%% *}" ] && ev=type
      case " $want " in *" $ev "*)
        case " $seen " in *" $ev "*) ;; *)
          printf '%-8s %-8s %-28s %-28s %6.2f s\n' "$1" "$ev" "${prev:-(none)}" "$now" "$lat"
          seen="$seen $ev"
          ;;
        esac
        ;;
      esac
    fi
    prev=$now
    # Every count change seen: the nodes a runs on drained (all of one GPU type), for the
    # type change.
    case " $want " in *" type "*)
      case " $seen " in *" 2->4 "*)
        if [ -z "$drained" ]; then
          on=$(echo "$now" | awk '{ for (i = 2; i <= NF; i++) { split($i, a, ":"); printf "%s%s", (i > 2 ? "," : ""), a[1] } }')
          scontrol update "NodeName=$on" State=DRAIN Reason=bench || fail "drain $on"
          drained=1
        fi
        ;;
      esac
      ;;
    esac
    left=0
    for e in $want; do case " $seen " in *" $e "*) ;; *) left=1 ;; esac; done
    [ "$left" = 0 ] && break
    [ $(($(date +%s) - start)) -gt 600 ] && fail "$1: after 600 s, events seen:$seen (of $want)"
    sleep 1 # the rounds' pace (a cron loop), not a wait for an event
  done
  # a ends here: its generation stopped, nothing of it left running.
  ctl cancel a >/dev/null || fail "$1: cancel a"
  ctl round >/dev/null 2>&1 || fail "$1: the round that ends a"
}

echo "mode     event    from                         to                           latency"
latency slurm
for n in n1 n2 n3; do scontrol update "NodeName=$n" State=RESUME 2>/dev/null; done
slurm_cancel_all
slurm_wait_idle 120
latency sia-run

# cpu: JOBS jobs through Slurm, ROUNDS rounds, the controller's CPU per round.
d=$tmp/cpu
config slurm "$d"
i=0
files=
while [ "$i" -lt "$JOBS" ]; do
  i=$((i + 1))
  cat >"$d/j$i.toml" <<TOML
name = "j$i"
model = "cifar10"
max_gpus = 2
command = ["/bin/sh", "-c", "trap 'exit 75' TERM; while :; do sleep 1; done"]
TOML
  files="$files $d/j$i.toml"
done
# shellcheck disable=SC2086
"$BIN/sia-ctl" --config "$d/config.toml" submit $files >/dev/null || fail "cpu: submit"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
  i=$((i + 1))
  "$E2E_PY" - "$BIN/sia-ctl" "$d/config.toml" >>"$d/cpu.txt" 2>"$d/cpu-$i.err" <<'PY' ||
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run([sys.argv[1], "--config", sys.argv[2], "-o", "json", "round"],
                   stdout=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.3f %d" % (u.ru_utime + u.ru_stime, time.time() - t, r.returncode))
PY
    fail "cpu: round $i"
  sleep 1
done
running=$(squeue -h -t R -o %i | wc -l)
awk -v jobs="$JOBS" -v running="$running" '
  $3 != 0 { bad = 1 }
  NR == 1 { first = $1; firstw = $2; next }
  { cpu[NR - 1] = $1; wall[NR - 1] = $2; n = NR - 1 }
  END {
    if (bad) { print "cpu: a round failed"; exit 1 }
    # median of the rounds after the first (a simple sort: n is small)
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (cpu[j] < cpu[i]) { t = cpu[i]; cpu[i] = cpu[j]; cpu[j] = t }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (wall[j] < wall[i]) { t = wall[i]; wall[i] = wall[j]; wall[j] = t }
    m = int((n + 1) / 2)
    printf "cpu      %d jobs (%d Slurm jobs running): first round %.3f s CPU (%.2f s wall); rounds 2-%d: median %.3f s CPU (%.2f s wall), max %.3f s\n",
      jobs, running, first, firstw, n + 1, cpu[m], wall[m], cpu[n]
  }' "$d/cpu.txt" || fail "cpu: $(cat "$d/cpu.txt")"
