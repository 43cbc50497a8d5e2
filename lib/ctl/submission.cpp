#include "ctl/submission.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/names.hpp"
#include "exec/state_dir.hpp"
#include "model/job_state.hpp"

namespace sia::ctl {

void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& what) {
    throw Error(ExitStatus::data, located(where, field, what));
  };
  if (!valid_job_name(spec.name)) {
    fail("name", "\"" + spec.name + "\" cannot name a job (" + std::string(kNameRule) + ")");
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

void validate_apps(const Submission& s, const std::string& where) {
  std::set<std::string> names, apps;
  auto twice = [&](const std::string& name) {
    if (!names.insert(name).second) {
      throw Error(ExitStatus::data, where + ": \"" + name + "\" is given twice (as a job or app)");
    }
  };
  for (const auto& a : s.apps) {
    twice(a.name);
    apps.insert(a.name);
  }
  std::set<std::string> with_trials;
  for (const auto& j : s.jobs) {
    twice(j.name);
    if (j.app.empty()) continue;
    if (!apps.count(j.app)) {
      throw Error(ExitStatus::data,
                  located(where, "app",
                          "job \"" + j.name + "\" names app \"" + j.app +
                              "\", which this submission does not hold (submit its App document)"));
    }
    with_trials.insert(j.app);
  }
  for (const auto& a : s.apps) {
    if (!with_trials.count(a.name)) {
      throw Error(ExitStatus::data, located(where, "template",
                                            "app \"" + a.name +
                                                "\" has no trials (expected a "
                                                "template for its jobs)"));
    }
  }
}

nlohmann::json submission_body(const Submission& s) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& j : s.jobs) jobs.push_back(job_spec_to_json(j));
  nlohmann::json body = {{"jobs", jobs}};
  if (!s.apps.empty()) {
    nlohmann::json apps = nlohmann::json::array();
    for (AppSpec a : s.apps) {
      a.trial_template.reset();  // its trials are the jobs
      apps.push_back(app_spec_to_json(a));
    }
    body["apps"] = std::move(apps);
  }
  return body;
}

Submission parse_submission_body(const Node& body) {
  Submission s;
  body.at("jobs").each([&](const Node& j) { s.jobs.push_back(parse_job_spec(j)); });
  if (auto apps = body.get("apps")) {
    apps->each([&](const Node& a) { s.apps.push_back(parse_app_spec(a)); });
  }
  return s;
}

Submission read_submissions(const std::vector<std::string>& files, const Catalog& catalog,
                            const Cluster* cluster) {
  Submission out;
  std::set<std::string> names;
  auto add = [&](const JobSpec& spec, const std::string& where) {
    validate_submission(spec, catalog, where);
    if (cluster) check_admissible(spec, catalog, *cluster, where);
    if (!names.insert(spec.name).second) {
      throw Error(ExitStatus::data, where + ": name: \"" + spec.name + "\" is given twice");
    }
    out.jobs.push_back(spec);
  };
  for (const auto& f : files) {
    std::vector<Document> docs = read_documents(f, {"JobSpec", "Jobs", "App"});
    std::vector<Document> jobs;
    for (auto& d : docs) {
      if (d.kind != "App") {
        jobs.push_back(std::move(d));
        continue;
      }
      AppSpec a = parse_app_spec(d.data());
      if (!a.trial_template) d.data().fail("expected a template (the trials' JobSpec)");
      for (const auto& t : expand_trials(a, d.data().file())) {
        add(t, display_name(f) + ": app " + a.name + ": trial " + t.name);
      }
      if (!names.insert(a.name).second) {
        d.data().at("name").fail("\"" + a.name + "\" is given twice (as a job or app)");
      }
      out.apps.push_back(std::move(a));
    }
    for (const auto& s : jobs_from_documents(jobs)) add(s.spec, s.where());
  }
  if (out.jobs.empty()) throw Error(ExitStatus::data, "no job to submit");
  std::string where;
  for (const auto& f : files) where += (where.empty() ? "" : ", ") + display_name(f);
  validate_apps(out, where);
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
