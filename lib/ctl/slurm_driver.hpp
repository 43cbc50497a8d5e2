// SlurmDriver: a NodeDriver (ctl/node_driver.hpp) that realises rounds through Slurm, with
// no sia agent on the nodes. Each generation of a job is one Slurm job (ctl/slurm_batch.hpp)
// on exactly the nodes and GPU counts of its placement; the ranks get sia-run's worker
// environment (exec/node_plan.hpp), with their reports, batch plans and logs under
// SHARED/nodes/FIRST (a sia-run state directory per rank-0 node, on storage every node
// shares: slurm.shared_dir) and checkpoints under controller.checkpoint_root (else
// SHARED/ckpt).
//   records   STATE/slurm/JOB.json: the job's generation, its Slurm job id (0 until sbatch
//             answered), the uid it was submitted as, its shape (GPU type, nodes and counts),
//             the attempt (state.attempt) it was for, whether sia asked it to stop, the
//             previous generation's Slurm id and when it was written -- BEFORE sbatch (the intent),
//             so a controller killed mid-round neither loses nor duplicates a generation: a record
//             without an id is adopted from Slurm's job list by its mark (slurm/job_mark.hpp) and
//             uid, and only a job Slurm says was submitted at or after intent_at (3 s of slack:
//             SubmitTime's whole seconds, the two clocks) and within sbatch's time limit of it -- a
//             job of the same user carrying the mark, submitted before the intent (the next mark
//             guessed) or after a failed sbatch, is never adopted (slurm::owned_job), nor
//             are its GPUs counted as sia's (slurm::usable_gpus); not listed, it counts as running
//             until its sbatch could no longer be on its way (the command's time limit and 10 s),
//             and only then as never submitted. Written again once sbatch gave the id. Each
//             generation's Slurm job id, once known, is also kept for history and logs
//             (slurm_generations.hpp).
//   users     each generation is submitted (sbatch) and signalled (scancel) as the job's
//             user -- exec::job_account, the rule sia-run applies to a job's run_as --
//             through CommandRunner::run_as when that is not this process's user; a job
//             with no account (submitted locally, or by an admin) runs as this process's user.
//             The job's directory SHARED/slurm/JOB (the batch script, Slurm's output, the
//             exit file) is made 0700 by root and given to the user through its descriptor;
//             the exit file is read through a descriptor (no link followed, 64 bytes at
//             most). Reports, batch plans and logs under SHARED/nodes follow sia-run's rules
//             (exec/run_as.hpp, give_job_files). A generation job_account refuses, or whose
//             files cannot be made or given (a link planted: refused), is recorded with
//             the reason ("refused") and observed failed with it, never submitted.
//   observe   Slurm's nodes and jobs (`scontrol -o show node`, `scontrol -d -o show job`,
//             through slurm::CommandRunner): a generation's Slurm state and the exit
//             status its batch script
//             wrote (SHARED/slurm/JOB/gen-G.exit) give its RunStatus on its first node:
//             running/stopping, finished (0), preempted (75: checkpoint-stopped), failed
//             (another status), killed (node failure, preemption, time limit, a stop sia
//             forced), or failed with "cancelled": true (scancel'ed by someone else).
//             A query failing (slurmctld down) makes every node down for the round with one
//             line and the driver blind (NodeDriver::blind): the round decides and delivers
//             nothing, the state is kept.
//   nodes_up  the cluster's nodes Slurm offers (in the partition, not down or drained) on
//             which every GPU is usable by sia (slurm::usable_gpus: none held by a job that
//             is not sia's); a node on which another user's job holds a GPU is not offered
//             to the round at all.
//   ownership adoption, signals, cancels and the GPU count only ever take a Slurm job
//             slurm::owns accepts for a record: the record's mark AND uid AND Slurm id (the
//             generation before stays sia's while it completes). A job of anyone's with
//             sia's mark written on it is another user's job.
//   deliver   per job: unchanged -> keep; batch only -> resize (the batch plan file, as
//             sia-run does); GPU type, nodes or counts changed, a new attempt (the Jobs
//             document's state.attempt: the round restarts a job whose ranks lost their
//             peers on the same placement; a record from before the field is attempt 0),
//             or no longer placed -> checkpoint-stop (scancel --batch --signal=TERM: the batch
//             script forwards it to the ranks, ctl/slurm_batch.hpp; up to slurm.grace_seconds, then
//             scancel) and, when placed, a new generation resuming from the checkpoint -- submitted
//             only once Slurm lists the stopped one as ended and its script wrote 75 (or it
//             was cancelled still pending). Otherwise (still there after the grace, ended
//             with another status: finished meanwhile, failed, killed) the next round sees
//             how it ended and decides: never two generations of a job at once, none after
//             one that finished.
//   reports   read from each SHARED/nodes/NODE state directory with the book's offsets.
// Thread-safety: one thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "ctl/command_driver.hpp"
#include "ctl/node_driver.hpp"
#include "exec/job_launch.hpp"
#include "exec/job_status.hpp"
#include "slurm/command_runner.hpp"
#include "slurm/slurm_cluster.hpp"
#include "slurm/slurm_jobs.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::ctl {

struct SlurmDriverOptions {
  std::string state_dir;        // the controller's
  std::string checkpoint_root;  // controller.checkpoint_root; empty: SHARED/ckpt
  long sia_uid = -1;  // the user of a job that has no account of its own; -1: this process's
  std::function<void(double)> sleep;  // waiting for a stop; null: the real one
  std::function<double()> now;        // wall-clock seconds; null: ctl::wall_clock
};

class SlurmDriver : public NodeDriver {
 public:
  SlurmDriver(Cluster cluster, slurm::SlurmSettings settings, SlurmDriverOptions options,
              std::unique_ptr<slurm::CommandRunner> runner, std::function<ReportOffsets()> offsets);

  std::vector<std::string> nodes_up() override;
  std::vector<NodeResult> deliver(std::int64_t round, const Placement& placement,
                                  const nlohmann::json& jobs_doc) override;
  std::vector<ReportLine> drain_reports() override;
  std::vector<NodeStatus> observe() override;
  bool blind() const override { return observed_ && !reachable_; }
  // Removes STATE/slurm/JOB.json, the job's generations (slurm_generations.hpp) and its
  // directory SHARED/slurm/JOB (script, Slurm's output, exit files): its user's, so removed
  // through descriptors from SHARED/slurm opened as a directory, never following a link
  // (os/remove_tree.hpp) -- a link planted inside it, or at its name, is removed itself,
  // never what it points at. What cannot be removed is a warning (take_warnings).
  void forget(const std::vector<std::string>& jobs) override;
  std::vector<std::string> take_warnings();

  struct Record {
    std::string job;
    long generation = 0;
    long slurm_id = 0;
    std::string node;       // rank 0's
    std::string shape;      // "TYPE NODE:N NODE:N"
    int attempt = 0;        // the Jobs document's state.attempt it was submitted for
    bool stop = false;      // sia asked it to stop
    long uid = -1;          // the user it was submitted as (and runs as)
    long previous_job = 0;  // the Slurm id of the generation before (0: none)
    long previous_generation = 0;
    std::string refused;   // why the generation was never submitted (it fails with this)
    double intent_at = 0;  // when the record of the generation was written before sbatch
    std::string token;     // the secret in the generation's mark (empty: an older record's)
  };
  // The records in STATE/slurm (a record without "uid" is `default_uid`'s), and the Slurm
  // jobs they make sia's: each record's generation and the one before it.
  static std::vector<Record> load_records(const std::string& state_dir, long default_uid);
  static std::vector<slurm::OwnedJob> owned_jobs(const std::vector<Record>& records);

  struct Seen {           // a record's generation as observe() found it
    bool absent = false;  // never reached Slurm: to be submitted again
    bool live = false;
    nlohmann::json status;  // its RunStatus entry
  };

 private:
  std::string record_path(const std::string& job) const;
  static Record record_of(const std::string& job, const nlohmann::json& j, long default_uid);
  void save(const Record& r) const;
  std::string job_dir(const std::string& job) const;
  Seen classify(Record& rec);
  void read_slurm();
  static slurm::OwnedJob owned(const Record& rec);
  const slurm::SlurmJob* own_job(const Record& rec) const;
  slurm::CommandResult run_for(const Record& rec, const std::vector<std::string>& argv);
  std::optional<int> read_exit(const Record& rec);
  std::set<std::string> stop_all(const std::vector<Record*>& jobs);
  std::optional<std::string> submit(Record& rec, std::vector<exec::JobLaunch>& launches);

  Cluster cluster_;
  slurm::SlurmSettings settings_;
  SlurmDriverOptions options_;
  std::unique_ptr<slurm::CommandRunner> runner_;
  std::function<ReportOffsets()> offsets_;
  bool observed_ = false;
  bool reachable_ = false;
  std::string unreachable_;
  std::vector<slurm::SlurmJob> slurm_jobs_;  // Slurm's jobs at the last read
  std::map<std::string, long> usable_;       // node -> GPUs sia may use (slurm::usable_gpus)
  std::map<std::string, Record> records_;
  std::map<std::string, Seen> seen_;
  std::vector<std::string> warnings_;
};

}  // namespace sia::ctl
