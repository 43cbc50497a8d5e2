#include "core/job_spec.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/error_list.hpp"
#include "core/time_text.hpp"

namespace sia {

const char* to_string(Adaptivity a) {
  switch (a) {
    case Adaptivity::adaptive:
      return "adaptive";
    case Adaptivity::strong_scaling:
      return "strong-scaling";
    case Adaptivity::rigid:
      return "rigid";
  }
  return "adaptive";
}

const char* to_string(JobClass c) {
  return c == JobClass::guaranteed ? "guaranteed" : "best_effort";
}

namespace {

// The latest deadline a spec may carry: 9999-12-31T23:59:59Z as Unix seconds.
constexpr double kMaxDeadline = 253402300799;

const char* const kDeadlineForms =
    "a UTC time (2026-12-05T18:00:00Z), a duration from submission (90m, 36h, 2d) or seconds "
    "on the clock of submit_time";

// A deadline's text into `spec`; false when it is neither a UTC time nor a duration.
bool read_deadline_text(JobSpec& spec, const std::string& text) {
  if (auto after = duration_seconds(text); after && *after > 0 && *after <= kMaxSeconds) {
    spec.deadline_after = after;
    spec.deadline.reset();
    return true;
  }
  if (auto at = utc_seconds(text)) {
    spec.deadline = at;
    spec.deadline_after.reset();
    return true;
  }
  return false;
}

}  // namespace

void set_deadline_text(JobSpec& spec, const std::string& text, const std::string& what) {
  if (!read_deadline_text(spec, text)) {
    throw Error(ExitStatus::data, what + ": expected " + kDeadlineForms + ", got \"" + text + "\"");
  }
}

JobClass parse_job_class(const std::string& text, const std::string& what) {
  if (text == "guaranteed") return JobClass::guaranteed;
  if (text == "best_effort") return JobClass::best_effort;
  throw Error(ExitStatus::data,
              what + ": expected \"guaranteed\" or \"best_effort\", got \"" + text + "\"");
}

void fix_deadline(JobSpec& spec, double submitted) {
  if (spec.deadline_after) {
    spec.deadline = submitted + *spec.deadline_after;
    spec.deadline_after.reset();
  }
}

void resolve_deadline(JobSpec& spec, double submitted, const std::string& where) {
  const std::string at = where.empty() ? "" : where + ": ";
  fix_deadline(spec, submitted);
  if (spec.deadline && !(*spec.deadline > submitted)) {
    throw Error(ExitStatus::data, at + "deadline: " + utc_text(*spec.deadline) +
                                      " is not after submission (" + utc_text(submitted) + ")");
  }
  if (spec.job_class == JobClass::guaranteed && !spec.deadline) {
    throw Error(ExitStatus::data, at + "class: a guaranteed job needs a deadline");
  }
}

bool JobSpec::allows_type(const std::string& type) const {
  return allowed_gpu_types.empty() || std::find(allowed_gpu_types.begin(), allowed_gpu_types.end(),
                                                type) != allowed_gpu_types.end();
}

JobSpec parse_job_spec(const Node& data) {
  JobSpec s;
  if (!data.is_object()) data.expected("a job description (an object)");
  // Every field is checked, and every mistake reported at once (ErrorList).
  ErrorList errors;
  auto check = [&](auto&& fn) { return errors.check(fn); };
  // What people write, and what sia's own writers add (`state`: see job_state_to_json).
  check([&] {
    data.only_keys({"name",
                    "model",
                    "adaptivity",
                    "min_gpus",
                    "max_gpus",
                    "gpus",
                    "init_batch_size",
                    "max_batch_size",
                    "batch_size",
                    "pipeline_stages",
                    "restart_cost",
                    "allowed_gpu_types",
                    "priority",
                    "preemptible",
                    "submit_time",
                    "command",
                    "workdir",
                    "profile",
                    "state",
                    "app",
                    "hparams",
                    "quality",
                    "deadline",
                    "class"});
  });
  check([&] {
    Node name = data.at("name");
    s.name = name.as_string();
    if (!valid_job_name(s.name)) name.expected("a job name of " + std::string(kNameRule));
  });
  check([&] { s.model = data.string_or("model", ""); });
  check([&] {
    if (auto a = data.get("adaptivity")) {
      std::string v = a->one_of({"adaptive", "strong-scaling", "rigid", "scale-gpus"});
      s.adaptivity = v == "rigid"      ? Adaptivity::rigid
                     : v == "adaptive" ? Adaptivity::adaptive
                                       : Adaptivity::strong_scaling;
    }
  });
  auto gpus = [](const Node& n) { return static_cast<int>(n.int_in(1, kMaxJobGpus)); };
  auto batch = [](const Node& n) { return n.number_in(1, kMaxBatchSize); };
  auto seconds = [](const Node& n) { return n.number_in(0, kMaxSeconds); };
  auto field = [&](const char* key, auto&& read) {
    check([&] {
      if (auto n = data.get(key)) read(*n);
    });
  };
  field("min_gpus", [&](const Node& n) { s.min_gpus = gpus(n); });
  field("max_gpus", [&](const Node& n) { s.max_gpus = gpus(n); });
  field("gpus", [&](const Node& n) { s.gpus = gpus(n); });
  field("init_batch_size", [&](const Node& n) { s.init_batch_size = batch(n); });
  field("max_batch_size", [&](const Node& n) { s.max_batch_size = batch(n); });
  field("batch_size", [&](const Node& n) { s.batch_size = batch(n); });
  field("pipeline_stages",
        [&](const Node& n) { s.pipeline_stages = static_cast<int>(n.int_in(1, 1024)); });
  field("restart_cost", [&](const Node& n) { s.restart_cost = seconds(n); });
  field("allowed_gpu_types", [&](const Node& n) {
    s.allowed_gpu_types = n.as_strings();
    if (s.allowed_gpu_types.empty()) n.expected("a non-empty list of GPU types");
  });
  field("priority", [&](const Node& n) {
    s.priority = static_cast<int>(n.int_in(-kMaxPriority, kMaxPriority));
  });
  check([&] { s.preemptible = data.bool_or("preemptible", true); });
  field("submit_time", [&](const Node& n) { s.submit_time = seconds(n); });
  field("command", [&](const Node& n) { s.command = n.as_strings(); });
  field("workdir", [&](const Node& n) {
    s.workdir = n.as_string();
    if (s.workdir.empty() || s.workdir.front() != '/') n.expected("an absolute directory path");
  });
  field("profile", [&](const Node& n) { s.profile = parse_profile(n); });
  field("app", [&](const Node& n) {
    s.app = n.as_string();
    if (!valid_job_name(s.app)) n.expected("an app name of " + std::string(kNameRule));
  });
  field("hparams", [&](const Node& h) {
    if (!h.is_object()) h.expected("an object of hyper-parameter values (numbers)");
    for (const auto& k : h.keys()) check([&] { s.hparams[k] = h.at(k).as_number(); });
  });
  field("quality", [&](const Node& n) { s.quality = n.non_negative_number(); });
  field("deadline", [&](const Node& n) {
    if (n.is_number()) {
      s.deadline = n.number_in(0, kMaxDeadline);
    } else if (!n.is_string() || !read_deadline_text(s, n.as_string())) {
      n.expected(kDeadlineForms);
    }
  });
  field("class", [&](const Node& n) {
    s.job_class = n.one_of({"guaranteed", "best_effort"}) == "guaranteed" ? JobClass::guaranteed
                                                                          : JobClass::best_effort;
  });

  check([&] {
    if (s.model.empty() && !s.profile && !data.has("profile") && !data.has("model")) {
      data.fail("expected a model (catalog key) or a profile");
    }
  });
  check([&] {
    if (s.max_gpus && s.min_gpus > s.max_gpus) {
      data.at("min_gpus")
          .fail("min_gpus " + std::to_string(s.min_gpus) + " exceeds max_gpus " +
                std::to_string(s.max_gpus));
    }
  });
  check([&] {
    if (s.adaptivity == Adaptivity::rigid && s.gpus == 0 && !data.has("gpus")) {
      data.fail("a rigid job needs gpus (its fixed GPU count)");
    }
  });
  check([&] {
    if (s.adaptivity != Adaptivity::adaptive && s.batch_size == 0 && !data.has("batch_size")) {
      data.fail(std::string("a ") + to_string(s.adaptivity) +
                " job needs batch_size (its fixed global batch)");
    }
  });
  check([&] {
    if (s.max_gpus && s.gpus > s.max_gpus) {
      data.at("gpus").fail("gpus " + std::to_string(s.gpus) + " exceeds max_gpus " +
                           std::to_string(s.max_gpus));
    }
  });
  check([&] {
    if (s.init_batch_size > 0 && s.max_batch_size > 0 && s.init_batch_size > s.max_batch_size) {
      data.at("init_batch_size").fail("init_batch_size exceeds max_batch_size");
    }
  });
  check([&] {
    if (s.job_class == JobClass::guaranteed && !s.deadline && !s.deadline_after &&
        !data.has("deadline")) {
      data.at("class").fail("a guaranteed job needs a deadline");
    }
  });
  errors.throw_if_any();
  return s;
}

nlohmann::json job_spec_to_json(const JobSpec& s) {
  nlohmann::json j;
  j["name"] = s.name;
  if (!s.model.empty()) j["model"] = s.model;
  j["adaptivity"] = to_string(s.adaptivity);
  j["min_gpus"] = s.min_gpus;
  if (s.max_gpus) j["max_gpus"] = s.max_gpus;
  if (s.gpus) j["gpus"] = s.gpus;
  if (s.init_batch_size > 0) j["init_batch_size"] = s.init_batch_size;
  if (s.max_batch_size > 0) j["max_batch_size"] = s.max_batch_size;
  if (s.batch_size > 0) j["batch_size"] = s.batch_size;
  if (s.pipeline_stages > 0) j["pipeline_stages"] = s.pipeline_stages;
  if (s.restart_cost >= 0) j["restart_cost"] = s.restart_cost;
  if (!s.allowed_gpu_types.empty()) j["allowed_gpu_types"] = s.allowed_gpu_types;
  if (s.priority) j["priority"] = s.priority;
  if (!s.preemptible) j["preemptible"] = false;
  if (s.submit_time > 0) j["submit_time"] = s.submit_time;
  if (!s.command.empty()) j["command"] = s.command;
  if (!s.workdir.empty()) j["workdir"] = s.workdir;
  if (s.profile) j["profile"] = profile_to_json(*s.profile);
  if (!s.app.empty()) j["app"] = s.app;
  if (!s.hparams.empty()) j["hparams"] = s.hparams;
  if (s.quality) j["quality"] = *s.quality;
  if (s.deadline) j["deadline"] = *s.deadline;
  if (s.deadline_after) {
    j["deadline"] = std::to_string(static_cast<long long>(*s.deadline_after)) + "s";
  }
  if (s.job_class != JobClass::best_effort) j["class"] = to_string(s.job_class);
  return j;
}

}  // namespace sia
