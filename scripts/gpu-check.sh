#!/bin/sh
# The checks that need an NVIDIA GPU, as one short script (a few minutes on one GPU):
# the reference worker's CUDA + NCCL backend (its unit test, a training run, a batch plan
# taken in place, a preemption and a restore), then the PyTorch library on CUDA with NCCL
# (training, a preemption and a restore, and `sia-profile run` measuring it on the GPU).
# Run it from the repository root on a machine with a GPU, CUDA and NCCL:
#   scripts/gpu-check.sh [BUILD_DIR]          (default build-gpu; prints PASS/FAIL lines)
# PyTorch parts are skipped (said so) when the python3 there has no CUDA-enabled torch.
set -u
cd "$(dirname "$0")/.."
SRC=$(pwd)
B=${1:-build-gpu}
PY=${SIA_PYTHON:-python3}
export NCCL_SOCKET_IFNAME=lo NO_COLOR=1 SIA_RENDEZVOUS_TIMEOUT=120
export PYTHONPATH="$SRC/python" OMP_NUM_THREADS=4
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
nvidia-smi -L || { echo "FAIL: no GPU visible"; exit 69; }

cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSIA_ENABLE_CUDA=ON >"$B.cmake.log" 2>&1 &&
  cmake --build "$B" -j "$(nproc)" --target sia-worker sia-run sia-profile sia_worker_cuda \
    test_worker_cuda >"$B.build.log" 2>&1 || { tail -30 "$B.build.log"; exit 70; }
BIN=$B/bin
W=$(mktemp -d)

# 1. The CUDA backend's own test (cuBLAS layers, NCCL all-reduce, out of memory -> 71).
if "$BIN/test_worker_cuda" >"$W/unit.log" 2>&1; then pass "test_worker_cuda"; else
  tail -20 "$W/unit.log"; fail "test_worker_cuda"; fi

# 2. sia-worker on the GPU: train, take a batch plan in place, preempt, restore.
env1() {
  echo RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=29611 SIA_JOB=g SIA_ROUND="$1" SIA_CKPT_DIR="$W/ck" SIA_REPORT="$W/r.jsonl" \
    SIA_REPORT_INTERVAL=0.5 SIA_LOCAL_BSZ=256 SIA_BATCH_PLAN="$W/plan.json" \
    SIA_DEVICE=cuda CUDA_VISIBLE_DEVICES=0 SIA_RESTORE="$2"
}
env $(env1 1 0) "$BIN/sia-worker" --steps 100000000 --hidden 1024 --layers 4 >"$W/w1.log" 2>&1 &
pid=$!
sleep 5
printf '{"type":"batch_plan","round":1,"plan":1,"batch_size":1024,"local_bsz":512,"accum_steps":1}' \
  >"$W/plan.tmp" && mv "$W/plan.tmp" "$W/plan.json"
sleep 3
kill -TERM $pid
wait $pid
rc=$?
grep -q '"reason":"batch".*"plan":1\|"plan":1.*"reason":"batch"' "$W/r.jsonl" &&
  pass "sia-worker cuda: batch plan taken in place" || fail "sia-worker cuda: no batch plan report"
[ "$rc" -eq 75 ] && pass "sia-worker cuda: SIGTERM -> 75" || fail "sia-worker cuda: exit $rc"
s=$(grep '"reason":"preempted"' "$W/r.jsonl" | sed -n 's/.*"step":\([0-9]*\).*/\1/p')
env $(env1 2 1) "$BIN/sia-worker" --steps $((s + 200)) --hidden 1024 --layers 4 >"$W/w2.log" 2>&1
rc=$?
grep -q "restored step $s" "$W/w2.log" && [ "$rc" -eq 0 ] &&
  pass "sia-worker cuda: restored step $s, ran to $((s + 200))" || {
  tail -5 "$W/w2.log"; fail "sia-worker cuda: restore (exit $rc)"; }
grep '"step_time"' "$W/r.jsonl" | tail -1 | cut -c1-300

# 3. The PyTorch library on CUDA with NCCL.
if "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  envt() {
    echo RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=29612 SIA_JOB=t SIA_ROUND="$1" SIA_CKPT_DIR="$W/tck" SIA_REPORT="$W/t.jsonl" \
      SIA_REPORT_INTERVAL=1 SIA_BATCH_SIZE=256 SIA_DEVICE=cuda CUDA_VISIBLE_DEVICES=0 \
      SIA_RESTORE="$2"
  }
  env $(envt 1 0) "$PY" examples/pytorch/cifar_cnn_sia.py --epochs 1000 --steps 100000 \
    >"$W/t1.log" 2>&1 &
  pid=$!
  sleep 20
  kill -TERM $pid
  wait $pid
  rc=$?
  grep -q "nccl" "$W/t1.log" && pass "sia.torch: NCCL process group" ||
    fail "sia.torch: no NCCL process group in its log"
  [ "$rc" -eq 75 ] && pass "sia.torch cuda: SIGTERM -> 75" || { tail -5 "$W/t1.log"; fail "sia.torch cuda: exit $rc"; }
  s=$(grep '"reason":"preempted"' "$W/t.jsonl" | sed -n 's/.*"step":\([0-9]*\).*/\1/p')
  env $(envt 2 1) "$PY" examples/pytorch/cifar_cnn_sia.py --epochs 1000 --steps $((s + 50)) \
    >"$W/t2.log" 2>&1
  rc=$?
  grep -q "restored step $s" "$W/t2.log" && [ "$rc" -eq 0 ] &&
    pass "sia.torch cuda: restored step $s, ran to $((s + 50))" || {
    tail -5 "$W/t2.log"; fail "sia.torch cuda: restore (exit $rc)"; }
  grep '"step_time"' "$W/t.jsonl" | tail -1 | cut -c1-300
  echo "name = \"t\"
model = \"cifar10\"
command = [\"$PY\", \"$SRC/examples/pytorch/cifar_cnn_sia.py\"]" >"$W/t.toml"
  if "$BIN/sia-profile" run --gpu-type a100 --max-bsz 512 --work-dir "$W/prof" "$W/t.toml" \
    >"$W/prof.json" 2>"$W/prof.log"; then pass "sia-profile run on the PyTorch job"; else
    tail -5 "$W/prof.log"; fail "sia-profile run on the PyTorch job"; fi
else
  echo "SKIP: $PY has no CUDA-enabled PyTorch: the library's GPU path was not checked"
fi
rm -rf "$W"
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
