#!/bin/sh
# The Slurm test bed (lib/slurm.sh) itself: a private Slurm of three emulated nodes of
# three GPU types comes up idle, offers the typed GPUs, runs a 2-node job with a GPU on
# each, and is gone (daemons and directory) after the script.
#   slurm_bed.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/slurm.sh"
slurm_bed n1:a100:4 n2:t4:2 n3:rtx2080ti:2
sinfo -h -N -o "%N %G" >nodes.txt || fail "sinfo"
grep -qx "n1 gpu:a100:4" nodes.txt && grep -qx "n2 gpu:t4:2" nodes.txt &&
  grep -qx "n3 gpu:rtx2080ti:2" nodes.txt || fail "the bed's GPUs: $(cat nodes.txt)"
job=$(sbatch --parsable -N2 -w n1,n2 --gres=gpu:1 -o "$tmp/job.out" \
  --wrap 'srun sh -c "echo \$SLURMD_NODENAME"; sleep 300') || fail "sbatch"
slurm_wait_job "$job" RUNNING
wait_for 60 "both nodes' tasks ran (job.out: $(cat "$tmp/job.out" 2>/dev/null))" \
  sh -c "grep -qx n1 '$tmp/job.out' 2>/dev/null && grep -qx n2 '$tmp/job.out'"
scontrol -d show job -o "$job" | grep -q "GRES=gpu:.*:1" || fail "no GPU per node: $(scontrol -d show job -o "$job")"
scancel "$job"
wait_for 60 "job $job gone" sh -c "[ -z \"\$(squeue -h -j $job -t R,CG -o %i 2>/dev/null)\" ]"
echo "ok"
