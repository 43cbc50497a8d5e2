#!/bin/sh
# Live profiling on a CPU slot: sia-profile run launches the job's worker (sia-worker, from
# the job spec's command) at doubling local batch sizes until the worker runs out of its
# memory budget (status 71), and prints a Profile that sia-estimate accepts in a job spec.
#   worker_profile.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
logs "$tmp/err"
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
json_check "a Profile" "$tmp/profile.json" 'd["kind"] == "Profile"'
grep -q 'cpu, local batch 512: out of memory; stopping at 256' "$tmp/err" ||
  fail "did not stop at the memory limit"
grep -q 'job mlp-live: 18 point(s) for 3 GPU type(s), measured on a CPU slot in ' "$tmp/err" ||
  fail "no cost line"
for t in t4 a100 rtx2080ti; do
  n=$(json_eval "$tmp/profile.json" "len([p for p in find(d, gpu_type='$t') if 'local_bsz' in p])")
  [ "$n" -eq 6 ] || fail "$n points for $t, expected 6 (8 to 256)"
done
json_check "cost_seconds" "$tmp/profile.json" 'd["data"]["cost_seconds"] >= 0'
json_check "the gradient statistics" "$tmp/profile.json" \
  'all(isinstance(d["data"]["gradient"][k], (int, float)) for k in ("grad_sqr", "grad_var"))'

# The profile, as a job's own, goes through sia-estimate.
python3 - "$tmp/profile.json" >"$tmp/spec.json" <<'PY' || fail "cannot take the data out of the profile"
import json, sys
profile = json.load(open(sys.argv[1]))["data"]
print(json.dumps({"apiVersion": "sia/v1", "kind": "JobSpec",
                  "data": {"name": "mlp-live", "init_batch_size": 32, "max_batch_size": 1024,
                           "profile": profile}}))
PY
"$BIN/sia-estimate" --cluster "$cluster" "$tmp/spec.json" >"$tmp/matrix.json" 2>"$tmp/err" ||
  fail "sia-estimate refused the profile"
json_check "a GoodputMatrix" "$tmp/matrix.json" 'd["kind"] == "GoodputMatrix"'
for t in t4 a100 rtx2080ti; do
  json_check "a configuration of $t" "$tmp/matrix.json" "has(d['data']['jobs'], gpu_type='$t')"
done

# Batch 8 does not fit a tiny budget: a clear failure.
"$BIN/sia-profile" run "$tmp/job.toml" --gpu-type t4 --cpu --steps 2 --memory-limit 0.05 \
  >"$tmp/none.json" 2>"$tmp/err"
st=$?
[ "$st" -eq 69 ] || fail "status $st for a batch that never fits, expected 69"
grep -q "local batch 8: does not fit" "$tmp/err" || fail "unclear message"
[ ! -s "$tmp/none.json" ] || fail "output despite the failure"
echo ok
