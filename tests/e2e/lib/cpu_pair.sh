# Sourced by the e2e scripts that run the cron-style controller (`sia-ctl round` from a
# shell loop) on the CPU, after lib/harness.sh (not a test itself: the e2e tests are
# tests/e2e/*.sh). Needs BIN (the programs) and ST (the state directory, "state" under the
# working directory).
# t4_cluster NAME NODES GPUS: writes cluster.toml (cluster NAME: NODES nodes of GPUS t4
# GPUs each) into the working directory.
t4_cluster() {
  cat >cluster.toml <<TOML
name = "$1"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = $3
count = $2
TOML
}
# cpu_pair_cluster: cluster "cpu-pair", two nodes of two t4 GPUs.
cpu_pair_cluster() { t4_cluster cpu-pair 2 2; }
# cpu_pair_setup: cpu_pair_cluster, and config.toml (that cluster, state directory
# "state", the default local node commands: one sia-run state directory per node under
# STATE/nodes, reports every 0.3 s) into the working directory.
cpu_pair_setup() {
  cpu_pair_cluster
  cat >config.toml <<'TOML'
[controller]
state_dir = "state"
cluster = "cluster.toml"
retention = 500
time_limit = 1
[nodes]
apply = ["sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node", "{node}",
         "--cluster", "{cluster}", "--jobs", "{jobs}", "--ckpt-root", "{state}/ckpt",
         "--report-interval", "0.3", "--grace", "20", "-o", "json", "-"]
TOML
}
# cpu_pair_stop JOB...: stops the jobs' workers on both nodes, one job at a time (a stop
# naming a job the node never ran stops nothing).
cpu_pair_stop() {
  for n in t4-0 t4-1; do
    for j in "$@"; do
      [ -d "$ST/nodes/$n" ] && "$BIN/sia-run" --state-dir "$ST/nodes/$n" stop --grace 0 "$j" \
        >/dev/null 2>&1
    done
  done
}
# cpu_pair_search APP COMMAND LRS [MAX_GPUS]: writes search.toml, app APP of one trial per
# learning rate (LRS: a TOML list), successive halving with eta 2 over three phases
# (budgets 1/4, 1/2, 1) on the loss; COMMAND (a TOML list) is the trials' command, "{lr}"
# in it theirs; each trial on at most MAX_GPUS (default 1) GPUs.
cpu_pair_search() {
  cat >search.toml <<TOML
kind = "App"
name = "$1"
metric = "loss"
direction = "min"
[scheduler]
kind = "successive-halving"
eta = 2
rungs = 3
[template]
model = "cifar10"
max_gpus = ${4:-1}
command = $2
[hparams.grid]
lr = $3
TOML
}
