#include "ctl/submission.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "core/document.hpp"
#include "core/error.hpp"
#include "exec/state_dir.hpp"
#include "model/job_state.hpp"

namespace sia::ctl {

void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& what) {
    throw Error(ExitStatus::data, located(where, field, what));
  };
  if (!valid_job_name(spec.name)) {
    fail("name", "\"" + spec.name + "\" cannot name a job (letters, digits, '-', '_', '.')");
  }
  if (!spec.app.empty()) {
    // Apps are simulated (sia-ctl simulate); the controller does not run app schedulers.
    fail("app", "the controller does not schedule apps yet (sia-ctl simulate does)");
  }
  if (spec.command.empty()) {
    fail("command", "expected the program and arguments sia-run starts, got none");
  }
  if (spec.model.empty() && !spec.profile) {
    fail("model", "expected a catalog model (or the job's own profile), got none");
  }
  if (!spec.model.empty() && !catalog.has(spec.model)) {
    std::string names;
    for (const auto& n : catalog.names()) names += (names.empty() ? "" : ", ") + n;
    fail("model", "unknown model \"" + spec.model + "\" (catalog has: " + names + ")");
  }
}

std::string unschedulable_reason(const JobSpec& spec, const Catalog& catalog,
                                 const Cluster& cluster, bool strict) {
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  if (spec.pipeline_stages > 1) {
    return "pipeline_stages: a hybrid-parallel job (" + std::to_string(spec.pipeline_stages) +
           " pipeline stages); sia-run starts data-parallel workers only";
  }
  if (strict) {
    for (const auto& t : spec.allowed_gpu_types) {
      if (cluster.type_index(t) < 0) {
        return "allowed_gpu_types: GPU type \"" + t +
               "\" is not in the cluster (it has: " + cluster.type_names() + ")";
      }
    }
  }
  const ModelInfo* model =
      !spec.model.empty() && catalog.has(spec.model) ? &catalog.get(spec.model) : nullptr;
  std::vector<std::string> allowed, measured, data_parallel;
  int most = 0;
  std::string most_type;
  for (const auto& t : cluster.types) {
    if (!spec.allows_type(t.name)) continue;
    allowed.push_back(t.name);
    bool has_data = false;
    int stages = 1;
    if (model) {
      if (const ModelGpu* g = model->gpu(t.name)) {
        has_data = true;
        stages = g->pipeline_stages;
      }
    }
    if (!has_data && spec.profile) {
      for (const auto& p : spec.profile->points) has_data = has_data || p.gpu_type == t.name;
    }
    if (!has_data) continue;
    measured.push_back(t.name);
    if (stages > 1) continue;
    data_parallel.push_back(t.name);
    if (t.capacity() > most) {
      most = t.capacity();
      most_type = t.name;
    }
  }
  if (allowed.empty()) {
    return "allowed_gpu_types: none of " + list(spec.allowed_gpu_types) +
           " is in the cluster (it has: " + cluster.type_names() + ")";
  }
  if (measured.empty()) {
    return std::string(spec.model.empty() ? "profile" : "model") + ": \"" +
           (spec.model.empty() ? spec.name : spec.model) +
           "\" has no measurements on the GPU types it may use here (" + list(allowed) + ")";
  }
  if (data_parallel.empty()) {
    return "model: \"" + spec.model + "\" is hybrid-parallel (pipeline stages on " +
           list(measured) + "); sia-run starts data-parallel workers only";
  }
  const bool rigid = spec.adaptivity == Adaptivity::rigid;
  const int need = rigid ? spec.gpus : spec.min_gpus;
  if (need > most) {
    return std::string(rigid ? "gpus" : "min_gpus") + ": " + std::to_string(need) +
           " GPUs, more than any GPU type it may use has (at most " + std::to_string(most) + ", " +
           most_type + ")";
  }
  return "";
}

void check_admissible(const JobSpec& spec, const Catalog& catalog, const Cluster& cluster,
                      const std::string& where) {
  std::string why = unschedulable_reason(spec, catalog, cluster, /*strict=*/true);
  if (why.empty()) return;
  auto colon = why.find(": ");
  throw Error(ExitStatus::data,
              located(where, why.substr(0, colon),
                      "cannot run on cluster " + cluster.name + ": " + why.substr(colon + 2)));
}

std::vector<JobSpec> read_submissions(const std::vector<std::string>& files, const Catalog& catalog,
                                      const Cluster* cluster) {
  std::vector<JobSpec> out;
  std::set<std::string> names;
  for (const auto& f : files) {
    auto docs = read_documents(f, {"JobSpec", "Jobs"});
    for (const auto& s : jobs_from_documents(docs)) {
      validate_submission(s.spec, catalog, s.where());
      if (cluster) check_admissible(s.spec, catalog, *cluster, s.where());
      if (!names.insert(s.spec.name).second) {
        throw Error(ExitStatus::data,
                    s.where("name") + ": job \"" + s.spec.name + "\" is given twice");
      }
      out.push_back(s.spec);
    }
  }
  if (out.empty()) throw Error(ExitStatus::data, "no job to submit");
  return out;
}

std::string local_identity() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name && *pw->pw_name) {
    return std::string("local:") + pw->pw_name;
  }
  if (const char* u = std::getenv("USER"); u && *u) return std::string("local:") + u;
  return "local:uid" + std::to_string(::getuid());
}

}  // namespace sia::ctl
