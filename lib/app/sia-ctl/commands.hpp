// sia-ctl's controller subcommands as library calls (tools/sia-ctl only parses flags):
//   round    exactly one scheduling round on the local state directory, holding its lock
//            (status 75 when another round or the daemon holds it), reaching the nodes
//            through the [nodes] command templates (CommandDriver)
//   submit   job files -> the controller (validated before anything is written)
//   status, cancel, hold, release, requeue, nodes, explain -> through a ClientBackend (local state
//   directory, or
//            the control channel when [client] connect is set and a remote backend is
//            linked in)
//   logs     a rank's log through the ClientBackend (the node that holds it reads it);
//            --follow polls for what it appends until the job ends or SIGINT/SIGTERM
//   config   the effective settings and where each came from
//   plot     the allocation timeline of the kept rounds, as HTML
//   fsck     checks every file the controller reads at start; --repair salvages them
//   slurm-cluster  the cluster description from Slurm ([slurm] settings)
// Each returns the exit status or throws sia::Error; documents go to stdout.
// Thread-safety: process-wide (stdout, children).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/tool.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"

namespace sia::ctl {

struct CtlArgs {
  ConfigSources sources;
  cli::Format format = cli::Format::table;
  bool dry_run = false;
};

// The settings from the flags and files, with a state directory (status 78 without one).
Settings config_of(const CtlArgs& args);

int run_round_command(const CtlArgs& args);
// submit's flags for every job: --deadline (a UTC time or a duration from now) and
// --class (guaranteed, best_effort); empty: each job's own.
struct SubmitFlags {
  std::vector<std::string> files;
  std::string deadline;
  std::string job_class;
  bool or_best_effort = false;  // a guaranteed job refused is submitted best-effort
};
int run_submit_command(const CtlArgs& args, const SubmitFlags& flags);
int run_status_command(const CtlArgs& args, const std::vector<std::string>& jobs,
                       const JobFilter& filter);
// history: accounting of the jobs the book holds (history.hpp), filtered; `since` as
// parse_since() reads it ("": all).
int run_history_command(const CtlArgs& args, JobFilter filter, const std::string& since);
// cancel, hold, release, requeue (with --dry-run: the jobs' status, nothing done).
int run_job_request_command(const CtlArgs& args, JobRequest request,
                            const std::vector<std::string>& jobs);
// nodes: under [slurm] (and no client.connect) Slurm's live nodes, a SlurmNodeList
// (slurm_nodes_document; 69 when slurmctld cannot be reached), else the book's NodeList.
int run_nodes_command(const CtlArgs& args);
nlohmann::json slurm_nodes_document(const Settings& config);
int run_explain_command(const CtlArgs& args, const std::string& job);
int run_config_command(const CtlArgs& args);
// fsck: checks the state directory under its lock (75 while a controller holds it); 0 when
// clean or repaired, 65 when damage was found and not repaired (fsck_command.cpp).
int run_fsck_command(const CtlArgs& args, bool repair);
// plot: the allocation timeline (GPUs per GPU type and per job) over the rounds the state
// directory keeps, as an HTML page written to `out` ("" or "-": stdout) (plot_command.cpp).
int run_plot_command(const CtlArgs& args, const std::string& out);

// slurm-cluster: the cluster from Slurm as cluster.toml (table) or a Cluster document
// (json), to stdout or atomically to `out`; 69 when slurmctld cannot be reached, 78 for a
// node sia cannot describe (slurm_cluster_command.cpp).
int run_slurm_cluster_command(const CtlArgs& args, const std::string& out);

struct LogsRequest {
  std::string job;
  int rank = 0;
  int tail = -1;  // >= 0: start with the last `tail` lines (else the whole log)
  bool follow = false;
};
int run_logs_command(const CtlArgs& args, const LogsRequest& request);

// "--stage NAME=COMMAND" -> {"stages.NAME", COMMAND}; status 64 for another NAME.
std::pair<std::string, std::string> parse_stage_flag(const std::string& text);

}  // namespace sia::ctl
