#include "model/job_state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/error_list.hpp"

namespace sia {

using nlohmann::json;

int CurrentAllocation::gpus() const {
  int n = 0;
  for (int g : placement) n += g;
  return n;
}

std::uint64_t fingerprint_points(const std::vector<ProfilePoint>& points) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* data, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  };
  for (const auto& p : points) {
    mix(p.gpu_type.data(), p.gpu_type.size());
    mix(&p.nodes, sizeof p.nodes);
    mix(&p.replicas, sizeof p.replicas);
    mix(&p.local_bsz, sizeof p.local_bsz);
    mix(&p.step_time, sizeof p.step_time);
    mix(&p.sync_time, sizeof p.sync_time);
  }
  return h;
}

std::string JobState::where(const std::string& field) const {
  std::string p = path;
  if (!field.empty()) p = p.empty() ? field : p + "." + field;
  if (file.empty()) return p.empty() ? spec.name : p;
  return p.empty() ? file : file + ": " + p;
}

JobState parse_job_state(const Node& job) {
  JobState s;
  s.spec = parse_job_spec(job);
  s.file = job.file();
  s.path = job.path();
  auto st = job.get("state");
  if (!st) return s;
  if (auto v = st->get("age")) s.age = v->non_negative_number();
  if (auto v = st->get("restarts")) s.restarts = v->non_negative_int32();
  if (auto c = st->get("current")) {
    CurrentAllocation a;
    a.gpu_type = c->at("gpu_type").as_string();
    Node pl = c->at("placement");
    pl.each([&](const Node& g) { a.placement.push_back(g.positive_int32()); });
    if (a.placement.empty()) pl.expected("a non-empty list of GPUs per node");
    s.current = a;
  }
  s.restoring = st->bool_or("restoring", false);
  if (auto v = st->get("progress")) s.progress = v->non_negative_number();
  if (auto v = st->get("step")) s.step = v->non_negative_int();
  if (auto v = st->get("checkpoint_dir")) {
    s.checkpoint_dir = v->as_string();
    if (s.checkpoint_dir.empty() || s.checkpoint_dir.front() != '/') {
      v->expected("an absolute directory path");
    }
  }
  if (auto v = st->get("target_progress")) s.target_progress = v->non_negative_number();
  if (auto v = st->get("stop_fraction")) s.stop_fraction = v->number_in(0, 1);
  if (auto v = st->get("attempt")) s.attempt = v->non_negative_int32();
  if (auto v = st->get("attained_service")) s.attained_service = v->non_negative_number();
  if (auto v = st->get("run_as")) s.run_as = parse_run_as(*v);
  if (auto obs = st->get("observations")) {
    obs->each([&](const Node& o) {
      s.observations.push_back(parse_profile_point(o));
      // A report may carry gradient statistics; the last one wins.
      if (o.has("grad_sqr") && o.has("grad_var")) {
        s.gradient = GradientStats{o.at("grad_sqr").non_negative_number(),
                                   o.at("grad_var").non_negative_number()};
      }
    });
  }
  if (auto g = st->get("gradient")) {
    s.gradient = GradientStats{g->at("grad_sqr").non_negative_number(),
                               g->at("grad_var").non_negative_number()};
  }
  if (auto models = st->get("models")) {
    for (const auto& type : models->keys()) {
      Node m = models->at(type);
      Node p = m.at("params");
      if (p.size() != 7) p.expected("7 parameters");
      std::array<double, 7> a{};
      for (std::size_t i = 0; i < 7; ++i) a[i] = p[i].as_number();
      FittedModel fm{PerfParams::from_array(a), m.at("points").non_negative_int32(), 0};
      if (auto f = m.get("fingerprint")) {
        std::string hex = f->as_string();
        bool ok = hex.size() == 16;
        for (char c : hex) ok = ok && std::isxdigit(static_cast<unsigned char>(c));
        if (!ok) f->expected("a fingerprint of 16 hexadecimal digits");
        fm.fingerprint = std::strtoull(hex.c_str(), nullptr, 16);
      }
      s.models[type] = fm;
    }
  }
  return s;
}

json job_state_to_json(const JobState& s) {
  json j = job_spec_to_json(s.spec);
  json st;
  st["age"] = s.age;
  st["restarts"] = s.restarts;
  if (s.current) {
    st["current"] = {{"gpu_type", s.current->gpu_type}, {"placement", s.current->placement}};
  }
  if (s.restoring) st["restoring"] = true;
  if (s.progress > 0) st["progress"] = s.progress;
  if (s.step > 0) st["step"] = s.step;
  if (!s.checkpoint_dir.empty()) st["checkpoint_dir"] = s.checkpoint_dir;
  if (s.target_progress > 0) st["target_progress"] = s.target_progress;
  if (s.stop_fraction > 0) st["stop_fraction"] = s.stop_fraction;
  if (s.attempt > 0) st["attempt"] = s.attempt;
  if (s.attained_service > 0) st["attained_service"] = s.attained_service;
  if (s.run_as) st["run_as"] = run_as_to_json(*s.run_as);
  if (!s.observations.empty()) {
    json obs = json::array();
    for (const auto& o : s.observations) obs.push_back(profile_point_to_json(o));
    st["observations"] = obs;
  }
  if (s.gradient) st["gradient"] = {{"grad_sqr", s.gradient->sqr}, {"grad_var", s.gradient->var}};
  if (!s.models.empty()) {
    json models;
    for (const auto& [type, m] : s.models) {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(m.fingerprint));
      models[type] = {{"params", m.params.to_array()}, {"points", m.points}, {"fingerprint", hex}};
    }
    st["models"] = models;
  }
  j["state"] = st;
  return j;
}

std::vector<JobState> jobs_from_documents(const std::vector<Document>& docs) {
  std::vector<JobState> out;
  std::set<std::string> names;
  ErrorList errors;  // every job's mistakes at once, one a line
  auto add = [&](const Node& n) {
    errors.check([&] {
      JobState s = parse_job_state(n);
      if (!names.insert(s.spec.name).second) {
        n.at("name").fail("duplicate job \"" + s.spec.name + "\"");
      }
      out.push_back(std::move(s));
    });
  };
  for (const auto& d : docs) {
    errors.check([&] {
      if (d.kind == "JobSpec") {
        add(d.data());
      } else {
        d.data().at("jobs").each(add);
      }
    });
  }
  errors.throw_if_any();
  return out;
}

}  // namespace sia
