#!/bin/sh
# sia-profile run measures a PyTorch job: the CNN example (examples/pytorch/
# cifar_cnn_sia.py), run on a CPU slot at local batches 8 and 16, answers each
# SIA_PROFILE_STEPS run with one "profile" report, and sia-profile prints a Profile
# with both points and the gradient statistics.
#   torch_profile.sh BIN_DIR SOURCE_DIR     (exit 77: no Python with torch)
set -u
BIN="$(cd "$1" && pwd)"
SRC="$(cd "$2" && pwd)"
PY=${SIA_PYTHON:-/usr/bin/python3}
"$PY" -c 'import torch' 2>/dev/null || { echo "skip: $PY cannot import torch"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
fail() {
  echo "FAIL: $*"
  cat "$tmp/err"
  for f in "$tmp"/work/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -5 "$f"; }; done
  exit 1
}
export PYTHONPATH="$SRC/python" OMP_NUM_THREADS=1
cat >"$tmp/job.toml" <<TOML
name = "cnn-live"
init_batch_size = 8
max_batch_size = 16
command = ["$PY", "$SRC/examples/pytorch/cifar_cnn_sia.py", "--dataset-size", "512"]
TOML
"$BIN/sia-profile" run "$tmp/job.toml" --gpu-type t4 --cpu --steps 3 --start-bsz 8 \
  --timeout 60 --work-dir "$tmp/work" >"$tmp/profile.json" 2>"$tmp/err" ||
  fail "sia-profile run exited $?"
grep -q '"kind":"Profile"' "$tmp/profile.json" || fail "not a Profile"
for b in 8 16; do
  grep -q "\"gpu_type\":\"t4\",\"local_bsz\":$b," "$tmp/profile.json" ||
    fail "no point at local batch $b: $(cat "$tmp/profile.json")"
  grep -q '"reason":"profile"' "$tmp/work/cpu-$b.jsonl" || fail "no profile report at $b"
done
grep -q '"gradient":{"grad_sqr":[0-9.e-]*,"grad_var":[0-9.e-]*}' "$tmp/profile.json" ||
  fail "no gradient statistics"
[ -z "$(ls "$tmp"/work/*.ckpt 2>/dev/null)" ] || fail "a profiling run wrote a checkpoint"
echo "ok: $(cat "$tmp/profile.json")"
