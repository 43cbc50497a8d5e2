#!/bin/sh
# sia-profile run measures a PyTorch job: the CNN example (examples/pytorch/
# cifar_cnn_sia.py), run on a CPU slot at local batches 8 and 16, answers each
# SIA_PROFILE_STEPS run with one "profile" report, and sia-profile prints a Profile
# with both points and the gradient statistics.
#   torch_profile.sh BIN_DIR SOURCE_DIR     (exit 77: no Python with torch)
. "$(dirname "$0")/lib/harness.sh"
need_torch
logs "$tmp/err" "$tmp/work/*.log"
cat >"$tmp/job.toml" <<TOML
name = "cnn-live"
init_batch_size = 8
max_batch_size = 16
command = ["$PY", "$SRC/examples/pytorch/cifar_cnn_sia.py", "--dataset-size", "512"]
TOML
"$BIN/sia-profile" run "$tmp/job.toml" --gpu-type t4 --cpu --steps 3 --start-bsz 8 \
  --timeout 60 --work-dir "$tmp/work" >"$tmp/profile.json" 2>"$tmp/err" ||
  fail "sia-profile run exited $?"
json_check "a Profile" "$tmp/profile.json" 'd["kind"] == "Profile"'
for b in 8 16; do
  json_check "a point at local batch $b" "$tmp/profile.json" "has(d, gpu_type='t4', local_bsz=$b)"
  json_check "a profile report at $b" "$tmp/work/cpu-$b.jsonl" 'has(docs, reason="profile")'
done
json_check "the gradient statistics" "$tmp/profile.json" \
  'any(isinstance(g, dict) and all(isinstance(g.get(k), (int, float)) for k in ("grad_sqr", "grad_var")) for g in values(d, "gradient"))'
[ -z "$(ls "$tmp"/work/*.ckpt 2>/dev/null)" ] || fail "a profiling run wrote a checkpoint"
echo "ok: $(cat "$tmp/profile.json")"
