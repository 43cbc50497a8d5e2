#!/bin/sh
# Several hosts (lib/netns.sh), every agent talking to the controller through a
# fault-injecting TCP proxy on its own host (lib/netfault_proxy.py; no netem here): first a
# quiet network, then on every link 100 ms of delay (+ up to 40 ms jitter), stalls of 1 s
# (a burst of loss) with probability 0.03 a chunk, and a dropped connection with
# probability 0.003 a chunk, drawn from a seed. Rounds go on, and the jobs finish exactly at
# their step limits; the round delivery time (ASSIGN sent to all ACKs back) is printed for
# the quiet and the faulty network. Checks as in net_node_lost.sh (the workers' timeline).
# Root only (skips with 77 otherwise). SIA_NETFAULT_SEED picks the faults;
# SIA_NETFAULT_SECONDS lengthens the jobs (the long form).
#   net_delay.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/net_cluster.sh"
SEED=${SIA_NETFAULT_SEED:-$(($$ % 100000))}
STEPS=$((8000 + ${SIA_NETFAULT_SECONDS:-0} * 100))
echo "net_delay: seed $SEED"
logs "$tmp/ctl-*.log" "$tmp/agent-*.log" "$tmp/proxy-*.log"
on_fail() { echo "seed $SEED"; ctl -o json status 2>&1 | head -c 2000; echo; }
net_cluster 15
i=0
for n in $NET_NODES; do
  i=$((i + 1))
  host_exec "$n" "$E2E_PY" "$E2E_LIB/netfault_proxy.py" --listen 127.0.0.1:7100 \
    --to "$(netns_addr ctl):$CTL_PORT" --delay 100 --jitter 40 --stall-prob 0.03 --stall 1000 \
    --drop-prob 0.003 --seed $((SEED + i)) --switch "$tmp/faults-on" >"proxy-$n.log" 2>&1 &
  started $!
  listening() { grep -q "^listening" "proxy-$1.log" 2>/dev/null; }
  wait_for 30 "the proxy of $n did not start" listening "$n"
  start_agent "$n" tcp://127.0.0.1:7100
done
for n in $NET_NODES; do wait_for 30 "agent $n did not connect" connected "$n"; done
start=$(date +%s)
net_job a "$STEPS"
net_job b "$STEPS"
net_job c "$STEPS"
rounds() { grep -c "round [0-9]*:.*delivery" ctl-0.log; }
quiet_rounds() { [ "$(rounds)" -ge 4 ]; }
wait_for 60 "no rounds on the quiet network" quiet_rounds
quiet=$(rounds)
touch faults-on
echo "faults on after $(($(date +%s) - start)) s ($quiet quiet rounds)"
net_settle 400 "$STEPS"
# Delivery: quiet rounds against faulty ones (rounds that placed something).
awk -v q="$quiet" '/round [0-9]*:.*delivery/ {
    n++; sub(/.*delivery /, ""); sub(/ s\)/, ""); if (n <= q) { qs += $0; qn++ } else { fs += $0; fn++ }
  } END { printf "round delivery: quiet %.3f s (%d rounds), faulty %.3f s (%d rounds)\n",
          qs / (qn ? qn : 1), qn, fs / (fn ? fn : 1), fn }' ctl-0.log
grep -h "dropped" proxy-*.log | wc -l | sed 's/^/connections dropped by the proxies: /'
echo "ok: seed $SEED, $(($(date +%s) - start)) s"
