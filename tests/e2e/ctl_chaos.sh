#!/bin/sh
# Chaos: `sia-ctl serve` and two `sia-run agent`s on loopback, the reference worker, a CPU
# hog beside them, and for SIA_CHAOS_SECONDS (default 30) a seeded random schedule of
# submissions, cancellations, and kill -9 of the controller or of an agent (each restarted
# a moment later; the workers of a killed agent live on, as a crashed daemon's would).
# Then everything is left to settle and checked:
#   - every submission the controller acknowledged exists, and ended;
#   - no two rounds (generations) of a job ran at once, on any node: every worker is
#     started through a wrapper that logs its start and end on one shared timeline;
#   - no job trained past its step limit, a finished one reached it exactly, and nothing
#     of a job started after the round that finished it;
#   - each job finished at most once (one worker exit 0);
#   - the controllers' own count of ended jobs does not exceed the jobs;
#   - the state directory reads back (status without the daemon) after all the kills.
# SIA_CHAOS_SEED picks the schedule (printed, to replay a failure); SIA_CHAOS_SECONDS and
# SIA_CHAOS_HOGS make the long form, which prints its figures either way.
#   ctl_chaos.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
export SIA_RENDEZVOUS_TIMEOUT=60
SECONDS_=${SIA_CHAOS_SECONDS:-30}
HOGS=${SIA_CHAOS_HOGS:-1}
SEED=${SIA_CHAOS_SEED:-$(($$ % 100000))}
STEPS=3000
NODES="t4-0 t4-1"
ctl_pid=
agent_t4_0=
agent_t4_1=
echo "chaos: seed $SEED, $SECONDS_ s, $HOGS hog(s)"

ctl() { "$BIN/sia-ctl" --config "$tmp/client.toml" "$@"; }
chaos_cleanup() {
  [ -n "$ctl_pid" ] && kill -9 "$ctl_pid"
  for p in $agent_t4_0 $agent_t4_1; do kill -9 "$p"; done
  # Whatever still runs: checkpoint-stopped job by job (a stop naming a job the node
  # never ran stops nothing).
  for n in $NODES; do
    [ -d "$tmp/nodes/$n/jobs" ] || continue
    for j in $(ls "$tmp/nodes/$n/jobs"); do
      "$BIN/sia-run" --state-dir "$tmp/nodes/$n" stop --grace 0 "$j"
    done
  done
}
at_exit chaos_cleanup
on_fail() {
  echo "seed $SEED"
  ctl -o json status 2>&1 | head -c 2000
  echo
  echo "--- events"
  tail -40 "$tmp/events.log"
}
logs "$tmp/ctl-*.log" "$tmp/agent-*.log"
. "$E2E_LIB/agent_keys.sh"
. "$E2E_LIB/job_history.sh"
. "$E2E_LIB/timeline.sh"

cat >cluster.toml <<'TOML'
name = "cpu-two"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 2
count = 2
TOML
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
bind = "tcp://127.0.0.1:*"
round = 2
retention = 50
time_limit = 1
heartbeat_interval = 0.5
heartbeat_liveness = 8
fence_after = 15
allow = "keys/allow.toml"
TOML
agent_keys "$BIN" keys $NODES
# Every worker through one wrapper: its start and end on one timeline (all nodes are this
# machine).
timeline_wrapper "$tmp/wrap.sh" "$tmp/events.log"
job() {
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = 2
command = ["$tmp/wrap.sh", "$BIN/sia-worker", "--device", "cpu", "--steps", "$STEPS", "--checkpoint-steps", "200"]
TOML
}

start_ctl() {  # start_ctl LOG [BIND]
  "$BIN/sia-ctl" --config config.toml serve ${2:+--bind "$2"} >"$1" 2>&1 &
  ctl_pid=$!
  started "$ctl_pid"
}
start_ctl ctl-0.log
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl-0.log; }
wait_for 30 "serve did not start" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl-0.log | head -1)
{ cat config.toml; printf '[client]\nconnect = "%s"\n' "$EP"; } >client.toml
start_agent() {  # start_agent NODE LOG
  "$BIN/sia-run" --state-dir "nodes/$1" agent --connect "$EP" --node "$1" \
    --server-key state/keys/server.pub --secret-key "keys/$1.key" \
    --cluster cluster.toml --heartbeat-interval 0.5 --heartbeat-liveness 8 --fence-after 15 \
    --grace 10 --ckpt-root "$tmp/ckpt" --report-interval 0.3 >>"$2" 2>&1 &
  eval "agent_$(echo "$1" | tr - _)=$!"
  started $!
}
for n in $NODES; do start_agent "$n" "agent-$n.log"; done
connected() { grep -q "$1 connected\|$1 reconnected" ctl-0.log; }
for n in $NODES; do wait_for 30 "agent $n did not connect" connected "$n"; done

# The schedule: one action per line, "SLEEP ACTION", drawn from the seed.
awk -v seed="$SEED" -v total="$SECONDS_" 'BEGIN {
  srand(seed); t = 0
  while (t < total) {
    s = 0.3 + rand() * 1.7; t += s; r = rand()
    if (r < 0.40) a = "submit"
    else if (r < 0.52) a = "cancel"
    else if (r < 0.68) a = "kill-ctl"
    else if (r < 0.84) a = "kill-agent " (rand() < 0.5 ? "t4-0" : "t4-1")
    else a = "none"
    printf "%.2f %s\n", s, a
  }
}' >plan.txt

hog_pids=
i=0
while [ "$i" -lt "$HOGS" ]; do
  sh -c 'while :; do :; done' &
  hog_pids="$hog_pids $!"
  started $!
  i=$((i + 1))
done
# The sleeps below are the schedule's pauses (chaos paced in time), not waits for events.
n_jobs=0 kills_ctl=0 kills_agent=0 cancels=0 refused=0
restarts=1
start=$(date +%s)
while read -r pause action node; do
  sleep "$pause"
  case $action in
    submit)
      n_jobs=$((n_jobs + 1))
      job "j$n_jobs"
      if ctl submit "j$n_jobs.toml" >out 2>&1; then
        echo "j$n_jobs" >>acked.txt
      else
        refused=$((refused + 1))  # the controller was down: not acknowledged
      fi
      ;;
    cancel)
      [ -s acked.txt ] || continue
      victim=$(awk -v s="$n_jobs" 'BEGIN { srand(s) } { l[NR] = $0 } END { print l[int(rand() * NR) + 1] }' acked.txt)
      ctl cancel "$victim" >/dev/null 2>&1 && cancels=$((cancels + 1))
      ;;
    kill-ctl)
      kill -9 "$ctl_pid" 2>/dev/null
      wait "$ctl_pid" 2>/dev/null
      kills_ctl=$((kills_ctl + 1))
      sleep 0.5
      start_ctl "ctl-$restarts.log" "$EP"
      restarts=$((restarts + 1))
      ;;
    kill-agent)
      eval "p=\$agent_$(echo "$node" | tr - _)"
      kill -9 "$p" 2>/dev/null
      wait "$p" 2>/dev/null
      kills_agent=$((kills_agent + 1))
      sleep 0.5
      start_agent "$node" "agent-$node.log"
      ;;
  esac
done <plan.txt
for p in $hog_pids; do kill "$p" 2>/dev/null; done
echo "chaos over after $(($(date +%s) - start)) s: $n_jobs submissions ($refused refused while" \
  "the controller was down), $cancels cancellations, $kills_ctl controller and" \
  "$kills_agent agent kills"

# Settle: every acknowledged job ends.
touch acked.txt
acked=$(wc -l <acked.txt)
ended_count() {
  ctl -o json status 2>/dev/null |
    json_eval - 'sum(count(d, state=s) for s in ("finished", "failed", "cancelled"))' 2>/dev/null
}
all_ended() { n=$(ended_count) && [ -n "$n" ] && [ "$n" -ge "$acked" ]; }
wait_for $((120 + 4 * acked)) "not all $acked acknowledged jobs ended" all_ended
echo "all $acked acknowledged jobs ended after $(($(date +%s) - start)) s"
kill -TERM "$ctl_pid"
wait "$ctl_pid"
ctl_pid=

# The state reads back without the daemon, and holds every acknowledged job, ended.
"$BIN/sia-ctl" --config config.toml -o json status >status.json 2>status.err ||
  fail "status on the state directory after the kills: $(cat status.err)"
for j in $(cat acked.txt); do
  json_has status.json "has(d['data']['jobs'], name='$j')" || fail "acknowledged job $j is missing"
done
json_eval status.json '" ".join("%s %d" % (s, n) for s, n in sorted(__import__("collections").Counter(j["state"] for j in d["data"]["jobs"]).items()))'

# The workers' timeline: per job, rounds never overlap; each started round ended.
timeline_check events.log
fenced=$(grep -l "is stale and leaves the checkpoints alone" nodes/*/jobs/*/logs/rank-*.log 2>/dev/null | wc -l)
echo "$fenced stale checkpoint writes refused"

# Step limits: never past STEPS; a finished job reached it exactly.
steps_check status.json "$STEPS" 'nodes/*/jobs/%s/reports.jsonl' $(cat acked.txt)
ended=$(cat ctl-*.log | sed -n 's/.* \([0-9]*\) ended,.*/\1/p' | awk '{s += $1} END {print s + 0}')
[ "$ended" -le "$n_jobs" ] || fail "the controllers ended $ended jobs, for $n_jobs submitted"
echo "ok: seed $SEED, $(($(date +%s) - start)) s"
