#!/bin/sh
# Operating the cron-style controller on a two-type CPU "cluster" on one machine, from a
# cluster file without addresses (node names that are not host names, one sia-run state
# directory per node under STATE/nodes): a job that must span two nodes runs there; a job
# no GPU type can hold is refused at submit; a job that fails ends failed with its status
# (explain shows its log's last lines, `logs` all of it); a job held from its submission
# does not run until it is released, then finishes; and
# `history` accounts each job's GPU time to within one round of what its nodes measured.
#   ctl_operations.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
stop_jobs() {
  for n in a100-0 a100-1 rtx-0; do
    for j in multi solo bad; do  # one at a time: a stop naming an unknown job stops nothing
      [ -d "$ST/nodes/$n" ] && "$BIN/sia-run" --state-dir "$ST/nodes/$n" stop --grace 0 "$j"
    done
  done
}
at_exit stop_jobs
on_fail() { ctl status; }
logs "$ST/nodes/*/jobs/*/logs/rank-*.log"

cat >cluster.toml <<'TOML'
name = "cpu-two-types"
[[gpu_types]]
name = "a100"
[[gpu_types]]
name = "rtx2080ti"
[[node_groups]]
gpu_type = "a100"
gpus_per_node = 1
count = 2
[[node_groups]]
gpu_type = "rtx2080ti"
gpus_per_node = 2
count = 1
name_prefix = "rtx-"
TOML
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
time_limit = 1
[nodes]
apply = ["sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node", "{node}",
         "--cluster", "{cluster}", "--jobs", "{jobs}", "--ckpt-root", "{state}/ckpt",
         "--report-interval", "0.3", "--grace", "20", "-o", "json", "-"]
TOML
STEPS=3000
worker="\"$BIN/sia-worker\", \"--device\", \"cpu\", \"--steps\", \"$STEPS\""
cat >multi.toml <<TOML
name = "multi"
model = "cifar10"
allowed_gpu_types = ["a100"]
min_gpus = 2
max_gpus = 2
command = [$worker]
TOML
cat >solo.toml <<TOML
name = "solo"
model = "cifar10"
allowed_gpu_types = ["rtx2080ti"]
max_gpus = 1
command = [$worker]
TOML
cat >bad.toml <<TOML
name = "bad"
model = "cifar10"
allowed_gpu_types = ["rtx2080ti"]
max_gpus = 1
command = ["sh", "-c", "echo boom >&2; exit 3"]
TOML
cat >huge.toml <<TOML
name = "huge"
model = "cifar10"
allowed_gpu_types = ["a100"]
min_gpus = 3
command = [$worker]
TOML

ctl submit huge.toml >out 2>&1
[ $? -eq 65 ] || { cat out; fail "a job needing 3 a100 GPUs of 2 was not refused with 65"; }
grep -q "min_gpus: cannot run on cluster cpu-two-types" out || { cat out; fail "refusal: $(cat out)"; }
ctl submit multi.toml solo.toml bad.toml >/dev/null || fail "submit"
ctl hold solo >/dev/null || fail "hold solo"

start=$(date +%s)
i=0
released=0
held_seen=0
while :; do
  i=$((i + 1))
  t0=$(date +%s)
  ctl -o json round >"round-$i.json" 2>"round-$i.err" ||
    { cat "round-$i.err"; fail "round $i exited $?"; }
  echo "$t0 $(date +%s)" >>round-times
  ctl -o json status solo >st.json || fail "status solo"
  if [ "$released" -eq 0 ]; then
    json_has st.json 'has(d, name="solo", reason_code="held")' && held_seen=$((held_seen + 1))
    json_has st.json 'has(d, name="solo", state="running")' && fail "held job solo runs"
    if [ "$held_seen" -ge 3 ]; then
      ctl release solo >/dev/null || fail "release solo"
      released=$i
    fi
  fi
  n=$(ctl -o json status | json_eval - 'count(d, state="finished") + count(d, state="failed")')
  [ "$n" -eq 3 ] && break
  [ $(($(date +%s) - start)) -gt 240 ] && fail "not all ended after 240 s ($i rounds)"
  sleep 0.5  # the rounds' pace (a poll: the loop ends on the jobs' states)
done
echo "all three jobs ended after $i rounds, $(($(date +%s) - start)) s (solo released in round $released)"

for j in multi solo; do
  ctl -o json status "$j" | json_has - "has(d, name='$j', state='finished')" ||
    fail "$j did not finish"
done
ctl -o json status bad | json_has - 'has(d, name="bad", exit_status=3)' ||
  fail "bad did not fail with status 3"
# Its explanation shows the end of its log; `logs` prints all of it.
ctl explain bad >out || fail "explain bad"
grep -q "boom" out || { cat out; fail "explain of the failed job does not show its log tail"; }
ctl logs bad >out || fail "logs bad"
grep -q "boom" out || { cat out; fail "logs bad"; }
ctl logs multi --rank 1 --tail 1 >out || fail "logs multi --rank 1"
[ "$(wc -l <out)" -eq 1 ] || { cat out; fail "logs --tail 1 printed $(wc -l <out) lines"; }
# multi ran as one job of two ranks on the two a100 nodes.
cat "$ST"/nodes/a100-[01]/jobs/multi/reports.jsonl 2>/dev/null | json_has - 'has(docs, world_size=2)' ||
  fail "multi's reports do not say world_size 2"
[ -f "$ST/nodes/a100-0/jobs/multi/logs/rank-0.log" ] && [ -f "$ST/nodes/a100-1/jobs/multi/logs/rank-1.log" ] ||
  fail "multi's ranks did not run one on each a100 node"
# solo was placed only after its release.
for f in round-*.json; do
  r=$(echo "$f" | sed 's/round-\([0-9]*\).json/\1/')
  [ "$r" -le "$released" ] &&
    json_has "$f" 'any(str(o.get("placement", "")).startswith("rtx") for o in find(d, name="solo"))' &&
    fail "solo placed in round $r, before its release in round $released"
done

# Accounting: each job's run time in history against its node's measure (the first rank
# log header to the last report written), within one round (the longest gap between rounds).
ctl -o csv history >hist.csv || fail "history -o csv"
gap=$(awk 'NR > 1 { g = $1 - prev; if (g > m) m = g } { prev = $1 } END { print m + 1 }' round-times)
for j in multi solo; do
  # name,user,identity,state,submitted,started,ended,wait_s,run_time_s,gpu_hours,...
  run=$(awk -F, -v j="$j" '$1 == j { print $9 }' hist.csv)
  gpuh=$(awk -F, -v j="$j" '$1 == j { print $10 }' hist.csv)
  node=$([ "$j" = multi ] && echo a100-0 || echo rtx-0)
  first=$(head -1 "$ST/nodes/$node/jobs/$j/logs/rank-0.log" | grep -o '[0-9-]*T[0-9:]*Z')
  t_start=$(date -u -d "$(echo "$first" | sed 's/T/ /; s/Z//')" +%s)
  t_end=$(stat -c %Y "$ST/nodes/$node/jobs/$j/reports.jsonl")
  measured=$((t_end - t_start))
  awk -v r="$run" -v m="$measured" -v g="$gap" 'BEGIN { d = r - m; if (d < 0) d = -d; exit !(d <= g + 1) }' ||
    fail "history says $j ran $run s; its node measured $measured s (rounds up to $gap s apart)"
  want=$([ "$j" = multi ] && echo 2 || echo 1)
  # run_time_s is in whole seconds (0.5 s off on each GPU at most) and gpu_hours has four
  # decimals (0.18 s off), beside 2% for the time between rounds.
  awk -v h="$gpuh" -v r="$run" -v w="$want" 'BEGIN { d = h * 3600 - r * w; if (d < 0) d = -d; exit !(d <= 0.02 * r * w + 0.5 * w + 0.5) }' ||
    fail "history: $j has $gpuh GPU hours for $run s on $want GPU(s)"
  echo "$j: history $run s on $want GPU(s) ($gpuh GPU h); its node measured $measured s"
done
ctl -o csv history --state failed >hist.csv || fail "history -o csv"
[ "$(wc -l <hist.csv)" -eq 2 ] && grep -q '^bad,' hist.csv || { cat hist.csv; fail "history --state failed -o csv"; }
ctl history --user nobody >out || fail "history --user"
grep -q multi out && fail "history --user nobody lists multi"
echo "ok"
