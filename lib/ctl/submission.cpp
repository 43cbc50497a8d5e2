#include "ctl/submission.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/error_list.hpp"
#include "core/names.hpp"
#include "exec/job_launch.hpp"
#include "exec/state_dir.hpp"
#include "model/job_state.hpp"

namespace sia::ctl {

namespace {

constexpr const char* kNoCommand = "expected the program and arguments sia-run starts, got none";

}  // namespace

JobLimits job_limits(const ControllerSettings& controller) {
  return {static_cast<std::size_t>(controller.max_command_bytes),
          static_cast<std::size_t>(controller.max_job_bytes)};
}

void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where,
                         const JobLimits& limits) {
  ErrorList errors;  // every field's mistake at once
  auto fail = [&](const std::string& field, const std::string& what) {
    errors.add(Error(ExitStatus::data, located(where, field, what)));
  };
  auto over = [&](const std::string& field, const std::string& what, std::size_t bytes,
                  std::size_t limit, const char* setting) {
    fail(field, what + std::to_string(bytes) + " bytes, over the limit of " +
                    std::to_string(limit) + " (controller." + setting + ")");
  };
  std::size_t command_bytes = 0;
  for (const auto& arg : spec.command) command_bytes += arg.size();
  if (command_bytes > limits.command_bytes) {
    over("command", "", command_bytes, limits.command_bytes, "max_command_bytes");
  }
  const std::size_t job_bytes =
      job_spec_to_json(spec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
  if (job_bytes > limits.job_bytes) {
    over("", "the job spec is ", job_bytes, limits.job_bytes, "max_job_bytes");
  }
  if (!valid_job_name(spec.name)) {
    fail("name", "\"" + spec.name + "\" cannot name a job (" + std::string(kNameRule) + ")");
  }
  if (spec.command.empty()) {
    fail("command", kNoCommand);
  }
  if (spec.model.empty() && !spec.profile) {
    fail("model", "expected a catalog model (or the job's own profile), got none");
  }
  if (!spec.model.empty() && !catalog.has(spec.model)) {
    std::string names;
    for (const auto& n : catalog.names()) names += (names.empty() ? "" : ", ") + n;
    fail("model", "unknown model \"" + spec.model + "\" (catalog has: " + names + ")");
  }
  // No batch above the job's largest (its own max_batch_size, else the catalog's; with
  // neither, init_batch_size is the largest): sia-formats(5), JobSpec.
  const bool known = !spec.model.empty() && catalog.has(spec.model);
  const double largest = spec.max_batch_size > 0 ? spec.max_batch_size
                         : known                 ? catalog.get(spec.model).max_batch_size
                                                 : 0;
  if (largest > 0) {
    const std::string whose = spec.max_batch_size > 0
                                  ? "its max_batch_size"
                                  : "max_batch_size of model " + spec.model + " in the catalog";
    const std::pair<const char*, double> batches[] = {{"init_batch_size", spec.init_batch_size},
                                                      {"batch_size", spec.batch_size}};
    for (const auto& [field, value] : batches) {
      if (value > largest) {
        fail(field, "expected a batch from 1 to " + exec::number_text(largest) + " (" + whose +
                        "), got " + exec::number_text(value));
      }
    }
  }
  errors.throw_if_any();
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
  if (s.or_best_effort) body["or_best_effort"] = true;
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
  if (auto o = body.get("or_best_effort")) s.or_best_effort = o->as_bool();
  return s;
}

Submission read_submissions(const std::vector<std::string>& files, const Catalog& catalog,
                            const Cluster* cluster, const JobLimits& limits) {
  Submission out;
  std::set<std::string> names;
  ErrorList errors;  // the mistakes of every file and job, reported at once
  auto add = [&](const JobSpec& spec, const std::string& where) {
    const bool valid = errors.check([&] {
      validate_submission(spec, catalog, where, limits);
      if (cluster) check_admissible(spec, catalog, *cluster, where);
    });
    if (!names.insert(spec.name).second) {
      errors.add(Error(ExitStatus::data, where + ": name: \"" + spec.name + "\" is given twice"));
    } else if (valid) {
      out.jobs.push_back(spec);
    }
  };
  for (const auto& f : files) {
    errors.check([&] {
      std::vector<Document> docs = read_documents(f, {"JobSpec", "Jobs", "App"});
      std::vector<Document> jobs;
      for (auto& d : docs) {
        if (d.kind != "App") {
          jobs.push_back(std::move(d));
          continue;
        }
        errors.check([&] {
          AppSpec a = parse_app_spec(d.data());
          if (!a.trial_template) d.data().fail("expected a template (the trials' JobSpec)");
          for (const auto& t : expand_trials(a, d.data().file())) {
            add(t, display_name(f) + ": app " + a.name + ": trial " + t.name);
          }
          if (!names.insert(a.name).second) {
            d.data().at("name").fail("\"" + a.name + "\" is given twice (as a job or app)");
          }
          out.apps.push_back(std::move(a));
        });
      }
      // Each job on its own: one that does not read leaves the others checked.
      auto job = [&](const Node& n) {
        const bool read = errors.check([&] {
          const JobState s = parse_job_state(n);
          add(s.spec, s.where());
        });
        // A job that does not read is still told of its missing command, in the same run.
        if (!read && n.is_object() && !n.has("command")) {
          errors.add(Error(ExitStatus::data,
                           located(n.path().empty() ? n.file() : n.file() + ": " + n.path(),
                                   "command", kNoCommand)));
        }
      };
      for (const auto& d : jobs) {
        errors.check([&] { d.kind == "JobSpec" ? job(d.data()) : d.data().at("jobs").each(job); });
      }
    });
  }
  errors.throw_if_any();
  if (out.jobs.empty()) throw Error(ExitStatus::data, "no job to submit");
  std::string where;
  for (const auto& f : files) where += (where.empty() ? "" : ", ") + display_name(f);
  validate_apps(out, where);
  return out;
}

void record_workdir(Submission& s, const std::string& cwd) {
  for (auto& j : s.jobs) {
    if (j.workdir.empty()) j.workdir = cwd;
  }
}

void stamp_deadlines(Submission& s, double now, const std::string& deadline,
                     const std::string& job_class) {
  for (auto& j : s.jobs) {
    if (!deadline.empty()) set_deadline_text(j, deadline, "--deadline");
    if (!job_class.empty()) j.job_class = parse_job_class(job_class, "--class");
    resolve_deadline(j, now, j.name);
  }
}

std::string local_identity() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name && *pw->pw_name) {
    return std::string("local:") + pw->pw_name;
  }
  if (const char* u = std::getenv("USER"); u && *u) return std::string("local:") + u;
  return "local:uid" + std::to_string(::getuid());
}

}  // namespace sia::ctl
