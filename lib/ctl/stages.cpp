#include "ctl/stages.hpp"

#include <filesystem>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/goodput_matrix.hpp"
#include "ctl/command_driver.hpp"
#include "ctl/pipe_process.hpp"
#include "ctl/state_store.hpp"
#include "deadline/row_table.hpp"
#include "model/estimator.hpp"
#include "model/shared_profiles.hpp"
#include "os/atomic_file.hpp"
#include "os/make_dirs.hpp"
#include "policy/knobs.hpp"
#include "policy/policy.hpp"
#include "round/guarantee.hpp"
#include "round/round_documents.hpp"
#include "round/schedule_pass.hpp"

namespace sia::ctl {

using nlohmann::json;

Stages::Stages(const Settings& config, std::string state_dir)
    : config_(config),
      state_dir_(std::move(state_dir)),
      catalog_(config.controller.catalog.empty() ? default_catalog_dir()
                                                 : config.controller.catalog) {}

std::string Stages::run_external(const std::string& stage, const std::string& command,
                                 const std::string& input, const std::string& previous_file,
                                 std::int64_t round) {
  const std::string cluster_file = state_dir_ + "/run/cluster.json";
  std::map<std::string, std::string> values = {{"cluster", cluster_file},
                                               {"profiles", profiles_file()},
                                               {"state", state_dir_},
                                               {"round", std::to_string(round)},
                                               {"previous", previous_file}};
  std::vector<std::string> argv;
  for (const auto& a : split_command(command)) {
    if (previous_file.empty() && a.find("{previous}") != std::string::npos) continue;
    argv.push_back(expand_placeholders(a, values));
  }
  const std::string what = "stage " + stage + " (" + command + ")";
  if (argv.empty()) throw Error(ExitStatus::config, what + ": empty command");
  // The solve stage also receives the policy knobs, each in its variable (sia-config(5)).
  std::vector<std::pair<std::string, std::string>> env = {{"SIA_CLUSTER", cluster_file}};
  if (stage == "solve") {
    for (const auto& kv : knob_environment(config_.controller.policy_options)) env.push_back(kv);
  }
  PipedResult r = run_piped(argv, input, config_.controller.stage_timeout, env);
  if (r.timed_out) {
    throw Error(ExitStatus::temp_fail, what + ": timed out after " +
                                           std::to_string(config_.controller.stage_timeout) +
                                           " s (controller.stage_timeout)");
  }
  if (r.status != 0) {
    std::string why = last_line(r.err);
    throw Error(ExitStatus::unavailable, what + ": exited with status " + std::to_string(r.status) +
                                             (why.empty() ? "" : ": " + why));
  }
  return r.out;
}

std::string Stages::profiles_file() const {
  return state_dir_ + "/" + kProfilesFile;
}

StageOutput Stages::run(const StageInput& in) {
  StageOutput out;
  const json meta = {{"generator", "sia-ctl round"}, {"round", in.round}};
  const std::string cluster_doc = cluster_document(meta, in.cluster);
  // STATE/run is recreated each round: removed under a running daemon, it would fail every
  // round from then on.
  os::make_dirs(state_dir_ + "/run");
  os::write_file_atomic(state_dir_ + "/run/cluster.json", cluster_doc);
  out.documents.push_back({"cluster", cluster_doc});
  GoodputMatrix matrix;
  const std::string goodput_doc = estimate(in, meta, out, matrix);
  const std::string allocation_doc = solve(in, meta, goodput_doc, matrix, out);
  place_jobs(in, meta, allocation_doc, out);
  out.matrix = std::move(matrix);
  return out;
}

namespace {

// The jobs' document as saved (round/round_documents.hpp).
std::string jobs_document(const json& meta, const std::vector<JobState>& list) {
  std::vector<const JobState*> views;
  for (const auto& j : list) views.push_back(&j);
  return sia::jobs_document(meta, views);
}

// The one document of `kind` a stage program printed (65 otherwise).
Document one_document(const std::string& text, const std::string& stage, const char* kind) {
  auto docs = parse_documents(text, "stage " + stage + " output", {kind});
  if (docs.size() != 1) {
    throw Error(ExitStatus::data,
                "stage " + stage + " output: expected one " + std::string(kind) + " document");
  }
  return docs.front();
}

}  // namespace

std::unique_ptr<Estimator> controller_estimator(const Settings& config, const Cluster& cluster,
                                                const Catalog& catalog,
                                                const std::string& profiles_file) {
  EstimatorOptions eo = estimator_options(Compat::standard);
  eo.profile_store = parse_profile_store(config.controller.profile_store);
  eo.baseline_info = config.controller.policy != "sia";
  auto est = std::make_unique<Estimator>(cluster, catalog, eo);
  // The profile store (Sia+): what earlier rounds' jobs measured, per catalog model.
  if (std::error_code ec; std::filesystem::exists(profiles_file, ec)) {
    for (const auto& p : read_shared_profiles(profiles_file)) est->share(p);
  }
  return est;
}

std::string Stages::estimate(const StageInput& in, const json& meta, StageOutput& out,
                             GoodputMatrix& matrix) {
  std::vector<JobState> jobs = in.jobs;
  std::string goodput_doc;
  if (config_.stages.estimate.empty()) {
    const auto estimator = controller_estimator(config_, in.cluster, catalog_, profiles_file());
    Estimator& est = *estimator;
    out.documents.push_back({"profiles", shared_profiles_document(est.shared_profiles(), meta)});
    std::vector<JobState*> views;
    for (auto& j : jobs) views.push_back(&j);
    std::vector<deadline::GuaranteedJob> guaranteed;  // this round's re-check, in order
    auto keep_promises = [&](std::size_t k, GoodputRow& row) {
      const JobSpec& spec = jobs[k].spec;
      mark_deadline(row, spec.job_class, spec.deadline, in.now);
      if (spec.job_class != JobClass::guaranteed || !spec.deadline || !row.progress) return;
      // Admission needed the initial batch; a job that reached the book otherwise (a
      // request file written by hand) without one is not kept.
      const double b0 =
          spec.init_batch_size > 0 || !spec.model.empty() ? est.init_batch_size(jobs[k]) : 0;
      if (!(b0 > 0)) return;
      guaranteed.push_back(deadline::guaranteed_question(
          row, b0, in.cluster, *spec.deadline, in.now, config_.controller.deadline_margin));
      guaranteed.back().held = true;
      if (config_.controller.policy == "sia")
        keep_on_schedule(row, b0, config_.controller.deadline_margin);
    };
    matrix = estimate_round(est, in.cluster, "default", views, in.apps, &out.unschedulable,
                            keep_promises);
    out.guarantees = deadline::admit_in_order(guaranteed, deadline::gpus_per_type(in.cluster));
    std::vector<JobState> kept;
    for (auto& j : jobs) {
      if (!out.unschedulable.count(j.spec.name)) kept.push_back(std::move(j));
    }
    for (const auto& j : kept) {
      json js = job_state_to_json(j);
      if (js["state"].contains("models")) out.models[j.spec.name] = js["state"]["models"];
    }
    jobs = std::move(kept);
    goodput_doc = goodput_matrix_document(matrix, meta, true) + "\n";
    const std::size_t generation = est.store_generation();
    for (const auto& j : jobs) est.record(j);
    if (est.store_generation() != generation) {
      out.profiles = shared_profiles_document(est.shared_profiles(), meta);
    }
  } else {
    // An external estimator keeps the store itself ({profiles}; sia-estimate --profiles
    // {profiles} --save-profiles {profiles}); it starts empty.
    if (std::error_code ec; !std::filesystem::exists(profiles_file(), ec)) {
      os::write_file_atomic(profiles_file(), "");
    }
    goodput_doc =
        run_external("estimate", config_.stages.estimate, jobs_document(meta, jobs), "", in.round);
    matrix = parse_goodput_matrix(one_document(goodput_doc, "estimate", "GoodputMatrix").data());
    if (matrix.order.empty()) {
      for (const auto& j : jobs) matrix.order.push_back(j.spec.name);
    }
  }
  out.documents.push_back({"jobs", jobs_document(meta, jobs)});
  out.documents.push_back({"goodput", goodput_doc});
  return goodput_doc;
}

std::string Stages::solve(const StageInput& in, const json& meta, const std::string& goodput_doc,
                          const GoodputMatrix& matrix, StageOutput& out) {
  std::string allocation_doc;
  if (config_.stages.solve.empty()) {
    PolicyOptions po = config_.controller.policy_options;
    po.explain = true;
    po.round = config_.controller.round;
    auto policy = make_policy(config_.controller.policy, po);
    out.allocation = solve_round(*policy, matrix, in.previous_allocation);
    out.allocation_data = allocation_to_json(out.allocation);
    allocation_doc = dump_document("Allocation", meta, out.allocation_data, true) + "\n";
  } else {
    std::string prev;
    if (in.previous_allocation) {
      prev = state_dir_ + "/run/previous-allocation.json";
      os::write_file_atomic(prev, allocation_document(meta, *in.previous_allocation));
    }
    allocation_doc = run_external("solve", config_.stages.solve, goodput_doc, prev, in.round);
    Document d = one_document(allocation_doc, "solve", "Allocation");
    out.allocation = parse_allocation(d.data());
    out.allocation_data = d.data().json();
  }
  out.documents.push_back({"allocation", allocation_doc});
  return allocation_doc;
}

void Stages::place_jobs(const StageInput& in, const json& meta, const std::string& allocation_doc,
                        StageOutput& out) {
  std::string placement_doc;
  std::optional<Placement> previous;
  if (in.previous_placement) {
    previous =
        parse_placement(Node(*in.previous_placement, "previous placement", "data"), in.cluster);
  }
  if (config_.stages.place.empty()) {
    for (const auto& j : out.allocation.jobs) {
      if (j.config &&
          in.cluster.type_index(out.allocation.cluster.types[j.config->type].name) < 0) {
        throw Error(ExitStatus::data, "stage solve: job \"" + j.job + "\": GPU type \"" +
                                          out.allocation.cluster.types[j.config->type].name +
                                          "\" is not in this round's cluster");
      }
    }
    out.placement = place_round(out.allocation, in.cluster, previous);
    out.placement_data = placement_to_json(out.placement, in.cluster, true);
    placement_doc = dump_document("Placement", meta, out.placement_data, true) + "\n";
  } else {
    std::string prev;
    if (previous) {
      prev = state_dir_ + "/run/previous-placement.json";
      os::write_file_atomic(prev, placement_document(meta, *previous, in.cluster));
    }
    placement_doc = run_external("place", config_.stages.place, allocation_doc, prev, in.round);
    Document d = one_document(placement_doc, "place", "Placement");
    out.placement = parse_placement(d.data(), in.cluster);
    out.placement_data = d.data().json();
  }
  out.documents.push_back({"placement", placement_doc});
}

}  // namespace sia::ctl
