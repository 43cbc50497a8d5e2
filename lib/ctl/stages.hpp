// The three scheduling stages of one controller round -- estimate (Jobs -> GoodputMatrix),
// solve (GoodputMatrix -> Allocation), place (Allocation -> Placement) -- run in-process
// through the library, or, for a stage with an override ([stages] in sia-config(5), or
// `sia-ctl round --stage NAME=COMMAND`), by an external program: the command split on
// spaces, the stage's input document on standard input, its output document expected on
// standard output, within controller.stage_timeout seconds. In an override's arguments
// {cluster} is this round's cluster file (also in $SIA_CLUSTER), {previous} the previous
// round's Allocation (solve) or Placement (place) -- an argument holding {previous} is left
// out when there is none -- {state} the state directory, {round} the round number and
// {profiles} the profile store's file (STATE/profiles.json; empty until something writes it).
// The in-process estimator reads the store from that file and hands back what it learnt
// (StageOutput::profiles); the round's documents include the store it started from.
// A failing override is an error: status 69 (it exited non-zero or could not start; its
// last stderr line quoted), 75 (timed out), 65 (its output is not the document expected).
// In-process solve and place run with --explain, so every round keeps why each job got
// what it got; a job the in-process estimator cannot estimate is reported, not fatal.
// The in-process estimator also keeps the round's promises (round/guarantee.hpp): every
// row is marked with its job's class and deadline, an admitted guaranteed job's row is
// kept on schedule under the sia policy, and the guaranteed jobs are re-checked
// (StageOutput::guarantees). An external estimator's rows are taken as they are.
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/allocation.hpp"
#include "core/cluster.hpp"
#include "core/goodput_matrix.hpp"
#include "core/placement.hpp"
#include "ctl/config.hpp"
#include "deadline/admission.hpp"
#include "model/catalog.hpp"
#include "model/estimator.hpp"
#include "model/job_state.hpp"

namespace sia::ctl {

struct StageInput {
  std::int64_t round = 0;
  double now = 0;                      // the round's time (seconds since the epoch)
  Cluster cluster;                     // the configured cluster less the nodes that are down
  std::vector<JobState> jobs;          // the active jobs, in submission order
  std::map<std::string, AppRef> apps;  // job -> its app (trials of an app only)
  std::optional<Allocation> previous_allocation;
  std::optional<nlohmann::json> previous_placement;  // Placement data valid on `cluster`
};

struct StageOutput {
  Allocation allocation;
  Placement placement;  // on StageInput::cluster
  // The round's documents as saved in STATE/rounds (suffix -> text): cluster, jobs,
  // goodput, allocation, placement.
  std::vector<std::pair<std::string, std::string>> documents;
  nlohmann::json allocation_data;                    // as printed (with explanations)
  nlohmann::json placement_data;                     // as printed (with notes)
  std::map<std::string, nlohmann::json> models;      // refreshed fits per job (in-process)
  std::map<std::string, std::string> unschedulable;  // job -> why it could not be estimated
  GoodputMatrix matrix;                              // the round's (from either estimator)
  // The profile store with this round's measurements added, when the in-process estimator
  // learnt something: the caller writes it to STATE/profiles.json (model/shared_profiles.hpp).
  std::optional<std::string> profiles;
  // The in-process estimator's re-check of the guaranteed jobs scheduled (sia-ctl(1)
  // DEADLINES): admit_in_order over them, in submission order, with what they measured.
  std::vector<deadline::OrderedAdmission> guarantees;
};

// The in-process estimator on `cluster` as a round makes it: the standard profile, the
// configured profile store with what `profiles_file` holds (when it exists), and the
// baselines' information for a policy other than sia. Admission (ctl/admission.hpp) asks
// the same estimator.
std::unique_ptr<Estimator> controller_estimator(const Settings& config, const Cluster& cluster,
                                                const Catalog& catalog,
                                                const std::string& profiles_file);

class Stages {
 public:
  Stages(const Settings& config, std::string state_dir);
  StageOutput run(const StageInput& input);
  // STATE/profiles.json: the profile store the in-process estimator starts each round from.
  std::string profiles_file() const;

 private:
  // The steps of run(); each adds its documents to `out`.
  std::string estimate(const StageInput& in, const nlohmann::json& meta, StageOutput& out,
                       GoodputMatrix& matrix);  // the GoodputMatrix document
  std::string solve(const StageInput& in, const nlohmann::json& meta,
                    const std::string& goodput_doc, const GoodputMatrix& matrix,
                    StageOutput& out);  // the Allocation document
  void place_jobs(const StageInput& in, const nlohmann::json& meta,
                  const std::string& allocation_doc, StageOutput& out);
  std::string run_external(const std::string& stage, const std::string& command,
                           const std::string& input, const std::string& previous_file,
                           std::int64_t round);

  Settings config_;
  std::string state_dir_;
  Catalog catalog_;
};

}  // namespace sia::ctl
