#!/bin/sh
# Live profiling on a CPU slot: sia-profile run launches the job's worker (sia-worker, from
# the job spec's command) at doubling local batch sizes until the worker runs out of its
# memory budget (status 71), and prints a Profile that sia-estimate accepts in a job spec.
#   worker_profile.sh BIN_DIR SOURCE_DIR
set -eu
BIN=$1
SRC=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  [ -f "$tmp/err" ] && cat "$tmp/err" >&2
  exit 1
}
cluster=$SRC/data/clusters/sia-hetero-64.toml
cat >"$tmp/job.toml" <<TOML
name = "mlp-live"
init_batch_size = 32
max_batch_size = 1024
command = ["$BIN/sia-worker", "--hidden", "96"]
TOML

# A 1 MiB budget holds local batches up to 256 of this model (0.9 MiB), not 512 (1.5 MiB).
"$BIN/sia-profile" run "$tmp/job.toml" --cluster "$cluster" --cpu --steps 5 \
  --memory-limit 1 --work-dir "$tmp/work" >"$tmp/profile.json" 2>"$tmp/err" ||
  fail "sia-profile run exited $?"
grep -q '"kind":"Profile"' "$tmp/profile.json" || fail "not a Profile"
grep -q 'cpu, local batch 512: out of memory; stopping at 256' "$tmp/err" ||
  fail "did not stop at the memory limit"
grep -q 'job mlp-live: 18 point(s) for 3 GPU type(s), measured on a CPU slot in ' "$tmp/err" ||
  fail "no cost line"
for t in t4 a100 rtx2080ti; do
  n=$(grep -o "\"gpu_type\":\"$t\",\"local_bsz\":[0-9]*" "$tmp/profile.json" | wc -l)
  [ "$n" -eq 6 ] || fail "$n points for $t, expected 6 (8 to 256)"
done
grep -q '"cost_seconds":[0-9]' "$tmp/profile.json" || fail "no cost_seconds"
grep -q '"gradient":{"grad_sqr":[0-9.e-]*,"grad_var":[0-9.e-]*}' "$tmp/profile.json" ||
  fail "no gradient statistics"

# The profile, as a job's own, goes through sia-estimate.
# (One line: {"apiVersion":"sia/v1","kind":"Profile","metadata":{},"data":{...}}.)
data=$(sed -n 's/^{"apiVersion":"sia\/v1","kind":"Profile","metadata":{},"data":\(.*\)}$/\1/p' \
  "$tmp/profile.json")
[ -n "$data" ] || fail "cannot take the data out of the profile"
spec='"name":"mlp-live","init_batch_size":32,"max_batch_size":1024'
printf '{"apiVersion":"sia/v1","kind":"JobSpec","data":{%s,"profile":%s}}\n' "$spec" "$data" \
  >"$tmp/spec.json"
"$BIN/sia-estimate" --cluster "$cluster" "$tmp/spec.json" >"$tmp/matrix.json" 2>"$tmp/err" ||
  fail "sia-estimate refused the profile"
grep -q '"kind":"GoodputMatrix"' "$tmp/matrix.json" || fail "no GoodputMatrix"
for t in t4 a100 rtx2080ti; do
  grep -q "\"$t\"" "$tmp/matrix.json" || fail "no configuration of $t"
done

# Batch 8 does not fit a tiny budget: a clear failure.
st=0
"$BIN/sia-profile" run "$tmp/job.toml" --gpu-type t4 --cpu --steps 2 --memory-limit 0.05 \
  >"$tmp/none.json" 2>"$tmp/err" || st=$?
[ "$st" -eq 69 ] || fail "status $st for a batch that never fits, expected 69"
grep -q "local batch 8: does not fit" "$tmp/err" || fail "unclear message"
[ ! -s "$tmp/none.json" ] || fail "output despite the failure"
echo ok
