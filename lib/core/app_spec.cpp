#include "core/app_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/error_list.hpp"
#include "core/hash64.hpp"
#include "core/names.hpp"

namespace sia {

std::string hparam_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

namespace {

// Replaces {app}, {trial} and {NAME} in every string of `j`.
void fill(nlohmann::json& j, const std::map<std::string, std::string>& values,
          const std::string& where) {
  if (j.is_object() || j.is_array()) {
    for (auto& v : j) fill(v, values, where);
    return;
  }
  if (!j.is_string()) return;
  const std::string s = j.get<std::string>();
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] != '{') {
      out += s[i++];
      continue;
    }
    const std::size_t close = s.find('}', i);
    if (close == std::string::npos)
      throw Error(ExitStatus::data, where + ": unclosed '{' in \"" + s + "\"");
    const std::string key = s.substr(i + 1, close - i - 1);
    auto it = values.find(key);
    if (it == values.end()) {
      throw Error(ExitStatus::data, where + ": unknown placeholder {" + key +
                                        "} (expected {app}, {trial} or a hyper-parameter name)");
    }
    out += it->second;
    i = close + 1;
  }
  j = out;
}

}  // namespace

const char* to_string(AppSchedulerKind k) {
  switch (k) {
    case AppSchedulerKind::successive_halving:
      return "successive-halving";
    case AppSchedulerKind::hyperband:
      return "hyperband";
    case AppSchedulerKind::none:
      break;
  }
  return "none";
}

double rung_fraction(const AppScheduler& s, int k) {
  if (s.kind == AppSchedulerKind::none || k >= s.rungs - 1) return 1.0;
  return std::pow(static_cast<double>(s.eta), -(s.rungs - 1 - k));
}

int app_brackets(const AppScheduler& s) {
  return s.kind == AppSchedulerKind::hyperband ? s.rungs : 1;
}

AppScheduler bracket_scheduler(const AppScheduler& s, int b) {
  if (s.kind != AppSchedulerKind::hyperband) return s;
  return {AppSchedulerKind::successive_halving, s.eta, std::max(1, s.rungs - b)};
}

std::vector<int> hyperband_brackets(const AppScheduler& s, int trials) {
  const int n = std::max(0, trials);
  const int brackets = app_brackets(s);
  if (brackets <= 1) return std::vector<int>(static_cast<std::size_t>(n), 0);
  const auto nb = static_cast<std::size_t>(brackets);
  std::vector<double> weight(nb);
  double total = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const int sb = brackets - 1 - static_cast<int>(b);
    weight[b] = std::ceil(static_cast<double>(brackets) / (sb + 1) * std::pow(s.eta, sb) - 1e-9);
    total += weight[b];
  }
  // Sizes: the largest-remainder shares; then, when there are enough trials, every empty
  // bracket takes one from the largest.
  std::vector<int> size(nb, 0);
  std::vector<double> remainder(nb);
  int given = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const double share = n * weight[b] / total;
    size[b] = static_cast<int>(std::floor(share + 1e-9));
    given += size[b];
    remainder[b] = share - size[b];
  }
  for (; given < n; ++given) {
    const auto best = static_cast<std::size_t>(
        std::max_element(remainder.begin(), remainder.end(),
                         [](double x, double y) { return x + 1e-12 < y; }) -
        remainder.begin());
    ++size[best];
    remainder[best] = -1;
  }
  for (std::size_t b = 0; n >= brackets && b < nb; ++b) {
    if (size[b] > 0) continue;
    --*std::max_element(size.begin(), size.end());
    size[b] = 1;
  }
  // Interleaved: each trial to the bracket furthest behind its share.
  std::vector<int> out(static_cast<std::size_t>(n));
  std::vector<int> assigned(nb, 0);
  for (int i = 0; i < n; ++i) {
    std::size_t best = nb;
    double behind = 0;
    for (std::size_t b = 0; b < nb; ++b) {
      if (assigned[b] >= size[b]) continue;
      const double d = static_cast<double>(size[b]) * (i + 1) / n - assigned[b];
      if (best == nb || d > behind + 1e-12) {
        best = b;
        behind = d;
      }
    }
    out[static_cast<std::size_t>(i)] = static_cast<int>(best);
    ++assigned[best];
  }
  return out;
}

AppSpec parse_app_spec(const Node& data) {
  AppSpec a;
  if (!data.is_object()) data.expected("an app description (an object)");
  // Every field is checked, and every mistake reported at once (ErrorList).
  ErrorList errors;
  auto check = [&](auto&& fn) { return errors.check(fn); };
  check([&] {
    data.only_keys(
        {"name", "submit_time", "scheduler", "metric", "direction", "template", "hparams"});
  });
  const bool name_ok = check([&] {
    Node name = data.at("name");
    a.name = name.as_string();
    if (!valid_job_name(a.name) || a.name.size() > kMaxJobName - 8) {
      name.expected("an app name of " + std::string(kNameRule) + " (at most 192 characters)");
    }
  });
  check([&] {
    if (auto n = data.get("submit_time")) a.submit_time = n->number_in(0, kMaxSeconds);
  });
  check([&] {
    auto s = data.get("scheduler");
    if (!s) return;
    if (!s->is_object()) s->expected("an object (kind, eta, rungs)");
    check([&] { s->only_keys({"kind", "eta", "rungs"}); });
    check([&] {
      if (auto k = s->get("kind")) {
        const std::string kind = k->one_of({"none", "successive-halving", "hyperband"});
        a.scheduler.kind = kind == "none"                 ? AppSchedulerKind::none
                           : kind == "successive-halving" ? AppSchedulerKind::successive_halving
                                                          : AppSchedulerKind::hyperband;
      }
    });
    check([&] {
      if (auto n = s->get("eta")) a.scheduler.eta = static_cast<int>(n->int_in(2, 100));
    });
    check([&] {
      if (auto n = s->get("rungs")) a.scheduler.rungs = static_cast<int>(n->int_in(1, 20));
    });
  });
  check([&] {
    a.metric = data.string_or("metric", "loss");
    if (a.metric.empty()) data.at("metric").expected("a report field name");
  });
  check([&] {
    if (auto d = data.get("direction")) a.minimize = d->one_of({"min", "max"}) == "min";
  });
  const bool template_ok = check([&] {
    if (auto t = data.get("template")) {
      if (!t->is_object()) t->expected("a job description (an object)");
      a.trial_template = t->json();
    }
  });
  const bool hparams_ok = check([&] {
    auto h = data.get("hparams");
    if (!h) return;
    h->only_keys({"grid", "sample"});
    if (h->has("grid") == h->has("sample")) h->fail("expected exactly one of grid or sample");
    if (auto g = h->get("grid")) {
      if (!g->is_object()) g->expected("an object of hyper-parameter value lists");
      for (const auto& k : g->keys()) {
        check([&] {
          Node list = g->at(k);
          std::vector<double> values;
          list.each([&](const Node& v) { values.push_back(v.as_number()); });
          if (values.empty()) list.expected("a non-empty list of numbers");
          a.grid.emplace_back(k, std::move(values));
        });
      }
    } else {
      Node s = h->at("sample");
      if (!s.is_object()) s.expected("an object (seed, trials, ranges)");
      check([&] { a.seed = static_cast<std::uint64_t>(s.at("seed").non_negative_int()); });
      check([&] { a.samples = static_cast<int>(s.at("trials").int_in(1, kMaxAppTrials)); });
      for (const auto& k : s.keys()) {
        if (k == "seed" || k == "trials") continue;
        check([&] {
          Node r = s.at(k);
          if (!r.is_object()) r.expected("a range {min, max, scale}");
          r.only_keys({"min", "max", "scale"});
          HparamRange hr{k, r.at("min").as_number(), r.at("max").as_number(), false};
          if (auto sc = r.get("scale")) hr.log = sc->one_of({"linear", "log"}) == "log";
          if (!(hr.min <= hr.max)) r.fail("expected min <= max");
          if (hr.log && !(hr.min > 0)) r.fail("a log scale needs min > 0");
          a.ranges.push_back(hr);
        });
      }
    }
  });
  const bool count_ok = check([&] {
    std::size_t trials = 1;
    for (const auto& [k, v] : a.grid) {
      trials *= v.size();
      if (trials > kMaxAppTrials) data.at("hparams").fail("more than 10000 trials");
    }
  });
  // The template, with the values of the trials (when their name and values read).
  if (a.trial_template && template_ok && name_ok && hparams_ok && count_ok) {
    check([&] { expand_trials(a, data.file()); });
  }
  errors.throw_if_any();
  return a;
}

nlohmann::json app_spec_to_json(const AppSpec& a) {
  nlohmann::json j{{"name", a.name},
                   {"scheduler",
                    {{"kind", to_string(a.scheduler.kind)},
                     {"eta", a.scheduler.eta},
                     {"rungs", a.scheduler.rungs}}},
                   {"metric", a.metric},
                   {"direction", a.minimize ? "min" : "max"}};
  if (a.submit_time > 0) j["submit_time"] = a.submit_time;
  if (a.trial_template) j["template"] = *a.trial_template;
  if (!a.grid.empty()) {
    nlohmann::json g = nlohmann::json::object();
    for (const auto& [k, v] : a.grid) g[k] = v;
    j["hparams"] = {{"grid", g}};
  } else if (a.samples > 0) {
    nlohmann::json s{{"seed", a.seed}, {"trials", a.samples}};
    for (const auto& r : a.ranges) {
      s[r.name] = {{"min", r.min}, {"max", r.max}, {"scale", r.log ? "log" : "linear"}};
    }
    j["hparams"] = {{"sample", s}};
  }
  return j;
}

std::vector<JobSpec> expand_trials(const AppSpec& a, const std::string& file) {
  std::vector<JobSpec> out;
  if (!a.trial_template) return out;
  // Every trial's values: the grid's combinations, or seeded draws.
  std::vector<std::map<std::string, double>> points;
  if (!a.grid.empty()) {
    points.emplace_back();
    for (const auto& [k, values] : a.grid) {
      std::vector<std::map<std::string, double>> next;
      for (const auto& p : points) {
        for (double v : values) {
          auto q = p;
          q[k] = v;
          next.push_back(std::move(q));
        }
      }
      points = std::move(next);
    }
  } else {
    const int n = a.samples > 0 ? a.samples : 1;
    for (int i = 0; i < n; ++i) {
      std::map<std::string, double> p;
      for (std::size_t r = 0; r < a.ranges.size(); ++r) {
        const HparamRange& hr = a.ranges[r];
        const double u = unit_interval(hash64(a.seed, static_cast<std::uint64_t>(i), r));
        p[hr.name] = hr.log ? std::exp(std::log(hr.min) + u * (std::log(hr.max) - std::log(hr.min)))
                            : hr.min + u * (hr.max - hr.min);
      }
      points.push_back(std::move(p));
    }
  }
  const std::string where = file + ": template";
  ErrorList errors;  // every trial's mistakes (each line once: most are the template's)
  for (std::size_t i = 0; i < points.size(); ++i) {
    errors.check([&] {
      char index[24];
      std::snprintf(index, sizeof index, "%03zu", i);
      std::map<std::string, std::string> values{{"app", a.name}, {"trial", index}};
      for (const auto& [k, v] : points[i]) values[k] = hparam_text(v);
      nlohmann::json t = *a.trial_template;
      if (!t.contains("name")) t["name"] = a.name + "-" + index;
      fill(t, values, where);
      if (!t.contains("submit_time") && a.submit_time > 0) t["submit_time"] = a.submit_time;
      JobSpec s = parse_job_spec(Node(t, file, "template"));
      s.app = a.name;
      s.hparams = points[i];
      out.push_back(std::move(s));
    });
  }
  errors.throw_if_any();
  return out;
}

}  // namespace sia
