# Sourced by the e2e scripts of several hosts with network faults, after lib/harness.sh
# (not a test itself). Builds on lib/netns.sh: host "ctl" runs `sia-ctl serve` (state
# directory on its local disk, tcp on its own address with CURVE keys), hosts t4-0, t4-1,
# t4-2 (two t4 GPUs each, their addresses in the cluster file) run `sia-run agent`, the
# checkpoint root on the shared file system. Every job's workers go through the timeline
# wrapper (lib/timeline.sh).
#   net_cluster FENCE_AFTER      the bed, keys, cluster and configuration; serve started
#   start_agent NODE [ENDPOINT]  the agent of NODE (default: straight to the controller)
#   net_agents                   every node's agent started, then connected
#   net_silence NODE             the seconds of silence after which the controller fences
#                                NODE (its agent's lease, sia-ctl(1) FAILURE MODEL), as the
#                                controller says it (sia-ctl nodes), rounded up
#   ctl ARGS...                  sia-ctl as the controller's admin, on the controller host
#   net_job NAME STEPS [MIN_GPUS] a job file NAME.toml (the reference worker on the CPU)
#   net_running JOB...           waits until every JOB runs
#   busy_host                    once a job trained, sets victim to a node host running one
#   net_span                     the cluster (fence_after 20) and its agents, the ranks'
#                                SIA_PEER_TIMEOUT 8, a job x of STEPS steps (3000, more
#                                with SIA_NETFAULT_SECONDS) on four GPUs (two hosts); once
#                                it trained past its second checkpoint (step 400) sets
#                                span_a and span_b to its two hosts (start: its submission)
#   net_span_cut                 net_span, then only the link between x's two hosts is cut
#                                (pair_cut); sets a and b (the hosts), ns_a and ns_b (their
#                                network namespaces) and cut_at (when, date +%s.%N)
#   net_not_fenced HOST...       fails if the controller fenced a HOST (it still reached it)
#   net_lost_on NETNS            prints how many generations of x had a rank started in
#                                network namespace NETNS that exited 69 (its peers lost)
#                                after cut_at (net_span_cut)
#   net_settle SECONDS STEPS     waits until every job of acked.txt ended, then runs every
#                                check (timeline, STEPS, status against what ran)
# Not thread-safe: one script, one shell.
. "$E2E_LIB/netns.sh"
. "$E2E_LIB/agent_keys.sh"
. "$E2E_LIB/job_history.sh"
. "$E2E_LIB/timeline.sh"
export SIA_RENDEZVOUS_TIMEOUT=60
NET_NODES="t4-0 t4-1 t4-2"
CTL_PORT=7000
# The channel's timing, the same on both sides; the agents' --grace is their stops'.
NET_HB=0.5
NET_LIVENESS=8
NET_GRACE=5

ctl() { host_exec ctl "$BIN/sia-ctl" --config "$tmp/host/client.toml" "$@"; }

net_cluster() {
  netns_bed ctl $NET_NODES
  EP=tcp://$(netns_addr ctl):$CTL_PORT
  cat >cluster.toml <<TOML
name = "net-three"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 2
count = 3
addresses = ["$(netns_addr t4-0)", "$(netns_addr t4-1)", "$(netns_addr t4-2)"]
TOML
  agent_keys "$BIN" keys $NET_NODES
  L=$tmp/hosts/ctl/local
  cat >"$L/config.toml" <<TOML
[controller]
state_dir = "$tmp/host/state"
cluster = "$tmp/cluster.toml"
bind = "$EP"
round = 2
retention = 500
time_limit = 1
heartbeat_interval = $NET_HB
heartbeat_liveness = $NET_LIVENESS
fence_after = $1
allow = "$tmp/keys/allow.toml"
TOML
  { cat "$L/config.toml"; printf '[client]\nconnect = "%s"\n' "$EP"; } >"$L/client.toml"
  NET_FENCE=$1
  timeline_wrapper "$tmp/wrap.sh" "$tmp/events.log"
  start_ctl ctl-0.log
  for n in $NET_NODES; do cp "$L/state/keys/server.pub" "$tmp/hosts/$n/local/server.pub"; done
}

start_ctl() {  # start_ctl LOG
  host_exec ctl "$BIN/sia-ctl" --config "$tmp/host/config.toml" serve >"$tmp/$1" 2>&1 &
  started $!
  _nc_log=$tmp/$1
  _nc_serving() { grep -q "serving tcp://" "$_nc_log"; }
  wait_for 30 "serve did not start: $(cat "$_nc_log" 2>/dev/null)" _nc_serving
}

start_agent() {  # start_agent NODE [ENDPOINT]
  host_exec "$1" "$BIN/sia-run" --state-dir "$tmp/host/node" agent --connect "${2:-$EP}" \
    --node "$1" --server-key "$tmp/host/server.pub" --secret-key "$tmp/keys/$1.key" \
    --cluster "$tmp/cluster.toml" --heartbeat-interval "$NET_HB" \
    --heartbeat-liveness "$NET_LIVENESS" --fence-after "$NET_FENCE" --grace "$NET_GRACE" \
    --ckpt-root "$tmp/shared/ckpt" \
    --report-interval 0.3 >>"$tmp/agent-$1.log" 2>&1 &
  started $!
}
connected() { cat "$tmp"/ctl-*.log | grep -q "$1 connected\|$1 reconnected"; }

net_agents() {
  for n in $NET_NODES; do start_agent "$n"; done
  for n in $NET_NODES; do wait_for 30 "agent $n did not connect" connected "$n"; done
}

net_silence() {  # net_silence NODE
  ctl -o json nodes >"$tmp/.net_nodes.json" || fail "sia-ctl nodes"
  json_eval "$tmp/.net_nodes.json" "-int(-find(d['data']['nodes'], name='$1')[0]['lease']['silence_limit'] // 1)" ||
    fail "no lease for $1 in sia-ctl nodes: $(head -c 400 "$tmp/.net_nodes.json")"
}

net_job() {  # net_job NAME STEPS [MIN_GPUS]
  cat >"$1.toml" <<TOML
name = "$1"
model = "cifar10"
max_gpus = ${3:-2}
min_gpus = ${3:-1}
command = ["$tmp/wrap.sh", "$BIN/sia-worker", "--device", "cpu", "--steps", "$2", "--checkpoint-steps", "200"]
TOML
  ctl submit "$tmp/$1.toml" >out 2>&1 || { cat out; fail "submit $1"; }
  echo "$1" >>acked.txt
}

net_running() {  # net_running JOB...
  _nr_running() { [ "$(job_state "$1")" = running ]; }
  for j in "$@"; do wait_for 60 "$j did not start" _nr_running "$j"; done
}

busy_host() {
  _bh_trained() { [ -n "$(max_step "$tmp"/hosts/*/local/node/jobs/*/reports.jsonl)" ]; }
  wait_for 60 "no job trained" _bh_trained
  # A node's status is one moment: a job between two generations (a rescale just ordered)
  # runs nowhere for that moment, so the question is asked until a host answers.
  _bh_pick() {
    victim=
    for n in $NET_NODES; do
      host_exec "$n" "$BIN/sia-run" --state-dir "$tmp/host/node" -o json status 2>/dev/null |
        json_has - 'has(d, state="running")' && { victim=$n; return 0; }
    done
    return 1
  }
  wait_for 60 "no host runs a job" _bh_pick
}

net_span() {
  export SIA_PEER_TIMEOUT=8  # the ranks give up on a peer well before a fence
  logs "$tmp/ctl-*.log" "$tmp/agent-*.log"
  on_fail() { ctl -o json status 2>&1 | head -c 2000; echo; tail -20 "$tmp/events.log"; }
  net_cluster 20
  net_agents
  start=$(date +%s)
  STEPS=$((3000 + ${SIA_NETFAULT_SECONDS:-0} * 100))
  net_job x "$STEPS" 4
  net_running x
  _sp_trained() { [ "$(max_step "$tmp"/hosts/*/local/node/jobs/x/reports.jsonl)" -ge 400 ] 2>/dev/null; }
  wait_for 120 "x did not train to step 400" _sp_trained
  _sp_hosts=
  for n in $NET_NODES; do
    host_exec "$n" "$BIN/sia-run" --state-dir "$tmp/host/node" -o json status 2>/dev/null |
      json_has - 'has(d, name="x", state="running")' && _sp_hosts="$_sp_hosts $n"
  done
  set -- $_sp_hosts
  [ $# -eq 2 ] || fail "x runs on$_sp_hosts, not on two hosts"
  span_a=$1 span_b=$2
}

net_span_cut() {
  net_span
  a=$span_a b=$span_b
  ns_a=$(host_exec "$a" readlink /proc/self/ns/net)
  ns_b=$(host_exec "$b" readlink /proc/self/ns/net)
  cut_at=$(date +%s.%N)
  pair_cut "$a" "$b"
  echo "cut $a from $b at $(($(date +%s) - start)) s"
}

net_not_fenced() {
  for _nnf_h in "$@"; do
    ! grep -q "$_nnf_h is fenced" "$tmp"/ctl-*.log || fail "$_nnf_h was fenced: it reached the controller"
  done
}

net_lost_on() {
  awk -v ns="$1" -v t="$cut_at" '$1 == "start" && $2 == "x" && $6 == ns { on[$3 " " $4] = 1 }
    $1 == "end" && $2 == "x" && $5 > t && $6 == 69 && on[$3 " " $4] { g[$3] = 1 }
    END { n = 0; for (k in g) n++; print n }' events.log
}

net_settle() {  # net_settle SECONDS STEPS
  _ns_acked=$(wc -l <acked.txt)
  _ns_list=$(awk '{printf "%s\"%s\"", (NR > 1 ? "," : ""), $1}' acked.txt)
  _ns_ended() {
    ctl -o json status 2>/dev/null | json_has - "all(has(d['data']['jobs'], name=j, state=s) or
      has(d['data']['jobs'], name=j, state='failed') or has(d['data']['jobs'], name=j,
      state='cancelled') for j in [$_ns_list] for s in ['finished'])" 2>/dev/null
  }
  wait_for "$1" "not all $_ns_acked acknowledged jobs ended" _ns_ended
  ctl -o json status >status.json || fail "status"
  timeline_check events.log
  steps_check status.json "$2" "$tmp/hosts/*/local/node/jobs/%s/reports.jsonl" $(cat acked.txt)
  # Status agrees with what ran: a job is finished there when its rank 0 exited 0.
  for j in $(cat acked.txt); do
    ran=$(awk -v j="$j" '$1 == "end" && $2 == j && $4 == 0 && $6 == 0' events.log | wc -l)
    if json_has status.json "has(d['data']['jobs'], name='$j', state='finished')"; then
      [ "$ran" -eq 1 ] || fail "$j is finished in status but its rank 0 ended well $ran times"
    else
      [ "$ran" -eq 0 ] || fail "$j finished on its node but status says otherwise"
    fi
  done
}
