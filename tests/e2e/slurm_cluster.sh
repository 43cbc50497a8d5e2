#!/bin/sh
# sia-ctl slurm-cluster on a private Slurm of three GPU types (lib/slurm.sh): the cluster
# description names every node with its mapped GPU type; a drained node is not offered;
# another user's job's GPUs are not usable, sia's own job's are (marked, and recorded in the
# state directory with its uid and Slurm id); with slurmctld
# stopped it says so in one line, status 69, and writes nothing.
#   slurm_cluster.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
. "$E2E_LIB/slurm.sh"
slurm_bed n1:a100:4 n2:t4:2 n3:l40s:2 n4:a100:4
cat >config.toml <<TOML
[controller]
state_dir = "$tmp/state"
[slurm]
conf = "$SLURM_CONF"
partition = "$SLURM_BED_PARTITION"
gres_types = { l40s = "rtx2080ti" }
TOML
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
# A type neither mapped nor in the catalog: one line naming it and the node, status 78.
SIA_SLURM_GRES_TYPES=x=y ctl slurm-cluster >out.toml 2>err.txt
[ $? -eq 78 ] || fail "unmapped type: expected 78 ($(cat err.txt))"
grep -q 'node n3: GPU type "l40s" is neither mapped' err.txt || fail "unmapped: $(cat err.txt)"
[ "$(wc -l <err.txt)" -eq 1 ] || fail "unmapped: more than one line: $(cat err.txt)"
ctl slurm-cluster --write cluster.toml || fail "slurm-cluster"
grep -q 'names = \["n1", "n4"\]' cluster.toml && grep -q 'gpu_type = "rtx2080ti"' cluster.toml ||
  fail "cluster.toml: $(cat cluster.toml)"
slurm_node_drain n4
ctl -o json slurm-cluster >c.json || fail "slurm-cluster -o json"
json_check "n4 drained, not offered" c.json \
  'd["data"]["node_groups"][0]["names"] == ["n1"] and "n4" not in d["metadata"]["usable_gpus"]'
json_check "GPUs per type" c.json '[t["gpus"] for t in d["data"]["gpu_types"]] == [4, 2, 2]'
# Another user's job (with a forged mark) holds 3 of n1's GPUs; sia's own marked job 1.
other=$(sbatch --parsable --uid=nobody --chdir=/tmp -o /dev/null -w n1 --gres=gpu:a100:3 \
  --comment=sia:x:1 --wrap 'sleep 300') || fail "sbatch as nobody"
mine=$(sbatch --parsable -o /dev/null -w n1 --gres=gpu:a100:1 --comment=sia:j:2 -J sia.j.2 \
  --wrap 'sleep 300') || fail "sbatch"
slurm_wait_job "$other" RUNNING
slurm_wait_job "$mine" RUNNING
# The mark alone is not enough: without sia's record of it, the job is nobody's of sia's.
ctl -o json slurm-cluster >c.json || fail "slurm-cluster -o json"
json_check "n1: a marked job sia has no record of is not sia's" c.json \
  'd["metadata"]["usable_gpus"]["n1"] == 0'
# sia's record of its job (sia-formats(5), "Slurm job records"): mark, uid and Slurm id.
mkdir -p state/slurm
printf '{"job":"j","generation":2,"slurm_job":%s,"node":"n1","shape":"","stop":false,"uid":%s}\n' \
  "$mine" "$(id -u)" >state/slurm/j.json
ctl -o json slurm-cluster >c.json || fail "slurm-cluster -o json"
json_check "n1: 4 - 3 of another user's = 1 usable" c.json \
  'd["metadata"]["usable_gpus"] == {"n1": 1, "n2": 2, "n3": 2}'
# slurmctld stopped: one line, 69, nothing written.
slurm_cancel_all
kill "$(cat "$SLURM_BED/run/slurmctld.pid")"
wait_for 60 "slurmctld stopped" sh -c '! scontrol ping 2>/dev/null | grep -q "is UP"'
SIA_SLURM_CONF=$SLURM_CONF ctl slurm-cluster --write gone.toml 2>err.txt
[ $? -eq 69 ] || fail "slurmctld stopped: expected 69 ($(cat err.txt))"
grep -q "slurm: slurmctld not reachable (scontrol: " err.txt || fail "unreachable: $(cat err.txt)"
[ ! -e gone.toml ] || fail "a file written without Slurm"
echo "ok"
