// Node plans: what a Placement asks of one node. For every job holding GPUs on the node,
// plan_node() gives the launch sia-run should have running there -- one rank per GPU,
// numbered by the placement's node order and then GPU index, the job's command and its
// working directory (the JobSpec's workdir), and the rendezvous address (the job's first
// node; 127.0.0.1 when the job is on this node only). prepare_generation() then fixes what
// belongs to one start of the job: its round, port, checkpoint and report paths and every
// rank's environment.
// Thread-safety: pure functions of their arguments (the probes passed in excepted).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "exec/job_launch.hpp"
#include "exec/state_dir.hpp"
#include "model/job_state.hpp"

namespace sia::exec {

// The jobs placed on `node`, sorted by name. Errors (status 65) cite `placement_file`: a
// job placed here that no JobSpec in `jobs` describes, or whose spec has no command, or a
// node listed twice for one job.
std::vector<JobLaunch> plan_node(const Placement& placement, const Cluster& cluster,
                                 const std::vector<JobState>& jobs, const std::string& node,
                                 const std::string& placement_file);

// A cluster made of what a Placement document names (its GPU types, its nodes with enough
// GPUs for the indices used, each node's address its name), for reading a placement when
// no cluster file is given. Malformed entries are skipped: parse_placement reports them.
Cluster cluster_from_placement(const Node& placement_data);

struct GenerationSettings {
  std::string ckpt_root;  // empty: in the state directory
  double report_interval = 30;
  double grace = 120;
  int port_lo = 29500;
  int port_hi = 29999;
  std::string cwd;
  std::function<bool(int)> port_free;  // null: take the derived port
  // Prefixed to the job in derive_port ("SCOPE:JOB") for a job spanning nodes: what makes
  // one sia's jobs differ from another's that share the nodes (the Slurm driver's shared
  // directory); empty: the job alone, as every sia-run node derives it.
  std::string port_scope;
  std::function<bool(const std::string&)> file_exists;  // null: no checkpoint
};

// Fixes generation `generation` of `launch`: paths, port, restore flag, rank environment,
// and the working directory when the job has no workdir (settings.cwd, sia-run's own).
// SIA_CKPT_DIR is CKPT_ROOT/JOB with a checkpoint root, else the job's checkpoint_dir (its
// Jobs state), else in the state directory. A job whose state gives a step (it trained
// before) and that finds no checkpoint there is marked restore_missing.
// SIA_BATCH_SIZE and SIA_LOCAL_BSZ are left out when the placement gives none (0).
void prepare_generation(JobLaunch& launch, int generation, const StateDir& state,
                        const GenerationSettings& settings);

// MASTER_PORT of a job spanning nodes (every node derives the same one, none probes):
// lo + FNV-1a(job "/" generation) mod (hi - lo + 1), job as "SCOPE:JOB" with a port_scope. A
// one-node job probes from derive_port(STATE_ROOT ":" job, generation, lo, hi) for the first free
// port instead.
int derive_port(const std::string& job, int generation, int lo, int hi);
// True when nothing listens on TCP `port` (a bind to it succeeds).
bool tcp_port_free(int port);
// True when `host` resolves to an address (getaddrinfo).
bool host_resolves(const std::string& host);

// The log's first line for one rank of one generation.
std::string rank_header(const JobLaunch& launch, const RankLaunch& rank);

}  // namespace sia::exec
