// The cluster as Slurm sees it, for sia: the nodes of the configured partition that take
// jobs (not DOWN, DRAINED, NOT_RESPONDING...), each with one GPU type mapped by
// [slurm] gres_types (or a catalog GPU type itself), as a Cluster (core/cluster.hpp); and,
// each round, the GPUs per node sia may use: configured minus those in use by Slurm jobs
// that are not sia's (owns(): marked AND the id and user sia recorded at submission). Bad input is
// one Error line: a GPU type neither mapped nor in the catalog, a node of several GPU types or of
// untyped GPUs (78); slurmctld unreachable (69, from run_or_throw); a sia job naming a node Slurm
// does not list (65). Thread-safety: pure functions over their arguments (the runner's own promise
// aside).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "slurm/command_runner.hpp"
#include "slurm/job_mark.hpp"
#include "slurm/slurm_jobs.hpp"
#include "slurm/slurm_nodes.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::slurm {

constexpr double kQueryTimeout = 30;    // seconds for one scontrol query
constexpr double kCommandTimeout = 60;  // seconds for sbatch or scancel
// Seconds a Slurm job's SubmitTime may lie before a record's intent_at and still be its
// sbatch's: one for SubmitTime's whole seconds, two for the clocks of the controller and
// slurmctld.
constexpr double kSubmitSlack = 3;

std::vector<SlurmNode> read_nodes(CommandRunner& runner);
std::vector<SlurmJob> read_jobs(CommandRunner& runner);

// The nodes sia may offer: usable, in the partition, with GPUs. Error(config) naming the
// node when one of them has a name or NodeAddr sia cannot use (core/names.hpp).
std::vector<SlurmNode> offered_nodes(const std::vector<SlurmNode>& nodes,
                                     const SlurmSettings& settings);

// The node's catalog GPU type (Error(config) when its GPUs are untyped, of several types,
// or of a type neither in settings.gres_types nor in `catalog_types`).
std::string node_gpu_type(const SlurmNode& node, const SlurmSettings& settings,
                          const std::set<std::string>& catalog_types);

// A Cluster named `name` of the offered nodes (one node group per GPU type, names and
// addresses as Slurm has them). Error(unavailable) when no node is offered.
Cluster cluster_from_slurm(const std::vector<SlurmNode>& nodes, const SlurmSettings& settings,
                           const std::set<std::string>& catalog_types, const std::string& name);

// What sia recorded when it submitted one generation of a job (the controller's
// STATE/slurm/JOB.json, ctl/slurm_driver.hpp): its mark, the user it was submitted as and
// Slurm's id for it (0 while sbatch has not answered: a controller killed in between) and
// when the record was written before sbatch (0: a record of a version that wrote none).
struct OwnedJob {
  JobMark mark;
  long uid = -1;
  long slurm_id = 0;
  double intent_at = 0;
};

// Is `job` the Slurm job `owned` records? Its comment is a mark of the record's job and
// generation, it runs as the record's uid, and its id (or, for a component of a
// heterogeneous job, its HetJobId) is the recorded id -- or, with no id recorded yet, any
// id of a job whose mark carries the record's token (where the record has one) and that
// Slurm says was submitted within the intent's sbatch: from intent_at (less kSubmitSlack)
// to its time limit (kCommandTimeout, plus the slack) -- adoption by mark, token and uid.
// The mark alone is nothing: any user may write it on a job of their own; the token is
// known only to the controller until its own sbatch has submitted the job.
bool owns(const OwnedJob& owned, const SlurmJob& job);
// Does any of `owned` own `job`?
bool is_sia_job(const SlurmJob& job, const std::vector<OwnedJob>& owned);
// Of the jobs `owned` owns, the one of the lowest id (a heterogeneous job's first
// component); with no id recorded, the job adoption takes. nullptr when none.
const SlurmJob* owned_job(const OwnedJob& owned, const std::vector<SlurmJob>& jobs);
// `owned` with each record that has no id yet given the id of the job adoption takes
// (owned_job), and left out when there is none: no other job carrying its mark counts as
// sia's.
std::vector<OwnedJob> adopted(const std::vector<OwnedJob>& owned,
                              const std::vector<SlurmJob>& jobs);

// Offered node -> GPUs sia may use on it now: its GPUs minus those in use, plus those held
// by sia's own jobs (is_sia_job over adopted(`owned`)), never below 0 nor above its GPUs.
std::map<std::string, long> usable_gpus(const std::vector<SlurmNode>& nodes,
                                        const std::vector<SlurmJob>& jobs,
                                        const SlurmSettings& settings,
                                        const std::vector<OwnedJob>& owned);

}  // namespace sia::slurm
