#include "policy/knobs.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "core/error.hpp"

namespace sia {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr unsigned kBoth = kSolveFlag | kSimulateFlag;

// "%g" without the exponent's sign and padding: 1e12, not 1e+12.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  std::string s = buf;
  if (auto e = s.find("e+"); e != std::string::npos) {
    std::size_t digits = e + 2;
    while (digits + 1 < s.size() && s[digits] == '0') ++digits;
    s = s.substr(0, e + 1) + s.substr(digits);
  }
  return s;
}

}  // namespace

const std::vector<Knob>& knob_table() {
  using O = PolicyOptions;
  static const std::vector<Knob> table = {
      {"p", "SIA_CTL_P", "--p", "P", &O::p, -kInf, kInf, false, "",
       "Sia: fairness power p (non-zero; < 0 favours fairness)", "Sia's fairness power", kBoth},
      {"lambda_n", "SIA_CTL_LAMBDA_N", "--lambda-n", "L", &O::lambda_n, -kInf, kInf, false, "",
       "Sia: value of leaving a job waiting (|.| > 1, sign opposite to p)", "Sia's lambda_n",
       kBoth},
      {"lambda_a", "SIA_CTL_LAMBDA_A", "--lambda-a", "A", &O::lambda_a, 0, kInf, false, "",
       "Sia: penalty for changing a job's allocation", "Sia's lambda_a", kBoth},
      {"min_efficiency", "SIA_CTL_MIN_EFFICIENCY", "--min-efficiency", "F", &O::min_efficiency, 0,
       1, false, "",
       "Sia+: offer a job no configuration whose goodput per GPU is below this fraction of its "
       "best on that GPU type (0: any)",
       "Sia+: the efficiency floor (0: none)", kBoth},
      {"hysteresis", "SIA_CTL_HYSTERESIS", "--hysteresis", "H", &O::hysteresis, 0, 10, false, "",
       "Sia+: a job's current configuration counts this much more goodput (0: none)",
       "Sia+: extra weight of a job's current configuration", kBoth},
      {"remaining_scale", "SIA_CTL_REMAINING_SCALE", "--remaining-scale", "GPU_SECONDS",
       &O::remaining_scale, 0, 1e12, false, "GPU-seconds",
       "Sia+: weight a job's values by 1 / (1 + its estimated GPU-seconds of work left / this) "
       "(0: none)",
       "Sia+: remaining-work weighting, GPU-seconds (0: none)", kBoth},
      {"remaining_floor", "SIA_CTL_REMAINING_FLOOR", "--remaining-floor", "F", &O::remaining_floor,
       0, 1, false, "", "Sia+: the least weight a job's values get (0 to 1)",
       "Sia+: the least remaining-work weight", kBoth},
      {"remaining_aging", "SIA_CTL_REMAINING_AGING", "--remaining-aging", "SECONDS",
       &O::remaining_aging, 0, 1e12, false, "seconds",
       "Sia+: the floor rises to 1 over this many seconds of a job's age (0: never)",
       "Sia+: seconds of age that lift the weight to 1 (0: never)", kBoth},
      {"gpu_price", "SIA_CTL_GPU_PRICE", "--gpu-price", "K", &O::gpu_price, 0, 1, false, "",
       "Sia+: lower each configuration's value by this much per GPU (0: none)",
       "Sia+: value per GPU a configuration must beat (0: none)", kBoth},
      {"restart_remaining", "SIA_CTL_RESTART_REMAINING", "--restart-remaining", "",
       &O::restart_remaining, 0, 1, false, "",
       "Sia+: price a move's restart against the job's estimated time left as well as its age "
       "(default on)",
       "Sia+: restarts priced against the work left", kBoth},
      {"time_limit", "SIA_CTL_TIME_LIMIT", "--time-limit", "SECONDS", &O::time_limit, 0, 86400,
       true, "seconds", "Solver time limit in seconds, a safety net behind the work limits",
       "solver time limit, seconds (a safety net)", kSolveFlag},
      {"node_limit", "SIA_CTL_NODE_LIMIT", "--node-limit", "N", &O::node_limit, 0, kInf, false, "",
       "Branch-and-bound nodes per MIP solve (0: none); bounds a solve in work, so the answer "
       "does not depend on the machine",
       "branch-and-bound nodes per MIP solve (0: none)", kBoth},
      {"iteration_limit", "SIA_CTL_ITERATION_LIMIT", "--iteration-limit", "N", &O::iteration_limit,
       0, kInf, false, "", "Simplex iterations per LP solve (0: none)",
       "simplex iterations per LP solve (0: none)", kBoth},
      {"mip_gap", "SIA_CTL_MIP_GAP", "--mip-gap", "GAP", &O::mip_gap, 0, kInf, false, "",
       "Relative optimality gap to stop at", "relative optimality gap a MIP solve stops at",
       kSolveFlag},
      {"seed", "SIA_CTL_SEED", "--seed", "N", &O::seed, 0, 4294967295.0, false, "",
       "Seed of randomised policies", "seed of the randomised policies (pollux, themis)", kBoth},
      {"gavel_reset", "SIA_CTL_GAVEL_RESET", "--gavel-reset", "SECONDS", &O::gavel_reset, 0, 1e9,
       false, "seconds", "Gavel: reset its time counters at most this often, seconds (0: never)",
       "Gavel: seconds between resets of its time counters (0: never)", kBoth},
      {"themis_f", "SIA_CTL_THEMIS_F", "--themis-f", "F", &O::themis_f, 0, 1, false, "",
       "Themis: fairness knob, the fraction of jobs not offered resources",
       "Themis: the fraction of jobs not offered resources", kBoth},
      {"themis_lease", "SIA_CTL_THEMIS_LEASE", "--themis-lease", "SECONDS", &O::themis_lease, 0,
       1e9, true, "seconds", "Themis: lease length in seconds", "Themis: lease length, seconds",
       kBoth},
      {"pollux_generations", "SIA_CTL_POLLUX_GENERATIONS", "--pollux-generations", "N",
       &O::pollux_generations, 1, 100000, false, "", "Pollux: generations of the genetic search",
       "Pollux: generations of the genetic search", kBoth},
      {"pollux_population", "SIA_CTL_POLLUX_POPULATION", "--pollux-population", "N",
       &O::pollux_population, 2, 100000, false, "", "Pollux: population of the genetic search",
       "Pollux: population of the genetic search", kBoth},
      {"pollux_p", "SIA_CTL_POLLUX_P", "--pollux-p", "P", &O::pollux_p, -kInf, kInf, false, "",
       "Pollux: power of the mean of the jobs' speedups its search maximises (0: the geometric "
       "mean)",
       "Pollux: power of the speedups' mean its search maximises", kBoth},
  };
  return table;
}

const Knob* find_knob(const std::string& name) {
  for (const Knob& k : knob_table()) {
    if (name == k.key || name == k.flag) return &k;
  }
  return nullptr;
}

std::string knob_text(const Knob& k, const PolicyOptions& o) {
  return std::visit(
      [&](auto m) -> std::string {
        using T = std::remove_reference_t<decltype(o.*m)>;
        if constexpr (std::is_same_v<T, const bool>) return o.*m ? "true" : "false";
        if constexpr (std::is_same_v<T, const unsigned>) return std::to_string(o.*m);
        return number_text(static_cast<double>(o.*m));
      },
      k.field);
}

std::string knob_default(const Knob& k) {
  static const PolicyOptions defaults;
  return knob_text(k, defaults);
}

std::string knob_range(const Knob& k) {
  if (!k.min_open && !*k.unit && std::isfinite(k.min) && std::isfinite(k.max)) {
    return "between " + number_text(k.min) + " and " + number_text(k.max);
  }
  std::string s = std::string(k.min_open ? "> " : ">= ") + number_text(k.min);
  if (*k.unit) s += std::string(" ") + k.unit;
  if (std::isfinite(k.max)) s += " and at most " + number_text(k.max);
  return s;
}

std::string knob_kind(const Knob& k) {
  return std::visit(
      [](auto m) -> std::string {
        using T = std::remove_reference_t<decltype(PolicyOptions{}.*m)>;
        if constexpr (std::is_same_v<T, bool>) return "true or false";
        if constexpr (std::is_same_v<T, double>) return "a number";
        return "an integer";
      },
      k.field);
}

bool set_knob(const Knob& k, PolicyOptions& o, double value) {
  return std::visit(
      [&](auto m) -> bool {
        using T = std::remove_reference_t<decltype(o.*m)>;
        if (!std::isfinite(value)) return false;
        if constexpr (std::is_same_v<T, bool>) {
          return false;
        } else if constexpr (std::is_same_v<T, double>) {
          o.*m = value;
          return true;
        } else {
          if (value != std::floor(value) ||
              value < static_cast<double>(std::numeric_limits<T>::min()) ||
              value > static_cast<double>(std::numeric_limits<T>::max())) {
            return false;
          }
          o.*m = static_cast<T>(value);
          return true;
        }
      },
      k.field);
}

bool set_knob(const Knob& k, PolicyOptions& o, const std::string& text) {
  if (const auto* b = std::get_if<bool PolicyOptions::*>(&k.field)) {
    if (text != "true" && text != "1" && text != "false" && text != "0") return false;
    o.** b = text == "true" || text == "1";
    return true;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return false;
  return set_knob(k, o, v);
}

std::vector<KnobProblem> knob_problems(const PolicyOptions& o) {
  std::vector<KnobProblem> out;
  const Knob* p = find_knob("p");
  for (const Knob& k : knob_table()) {
    if (&k == p) {
      if (!std::isfinite(o.p) || o.p == 0) {
        out.push_back({&k, nullptr, "the fairness power must be non-zero"});
      }
    } else if (k.key == std::string("lambda_n")) {
      if (!std::isfinite(o.lambda_n) || (o.lambda_n > 0) == (o.p > 0) || o.lambda_n == 0) {
        out.push_back({&k, p,
                       "must have the opposite sign of {other} (p = " + number_text(o.p) +
                           "): with the same sign leaving jobs waiting would score better than "
                           "running them"});
      } else if (std::fabs(o.lambda_n) <= 1) {
        out.push_back({&k, nullptr,
                       "|lambda_n| must exceed 1, the smallest value of any allocation; "
                       "otherwise jobs may be left waiting while GPUs idle"});
      }
    } else {
      const double v = std::visit([&](auto m) { return static_cast<double>(o.*m); }, k.field);
      const bool finite = std::isfinite(v);
      if (finite && (k.min_open ? v > k.min : v >= k.min) && v <= k.max) continue;
      // An unbounded range says nothing of infinity and NaN: say "finite" too.
      std::string what = "must be ";
      if (!finite && !std::isfinite(k.max)) {
        what += std::isfinite(k.min) ? "a finite number " + knob_range(k) : "a finite number";
      } else {
        what += knob_range(k);
      }
      out.push_back({&k, nullptr, what});
    }
  }
  return out;
}

std::string describe(const KnobProblem& problem,
                     const std::function<std::string(const Knob&)>& name) {
  std::string what = problem.what;
  if (problem.other) {
    const std::string other = name(*problem.other);
    for (auto at = what.find("{other}"); at != std::string::npos; at = what.find("{other}")) {
      what.replace(at, 7, other);
    }
  }
  return name(*problem.knob) + ": " + what;
}

std::set<std::string> read_knob_environment(PolicyOptions& o, const std::set<std::string>& given,
                                            const std::function<const char*(const char*)>& getenv) {
  std::set<std::string> read;
  for (const Knob& k : knob_table()) {
    if (given.count(k.key)) continue;
    const char* v = getenv(k.env);
    if (!v || !*v) continue;
    if (!set_knob(k, o, std::string(v))) {
      throw Error(ExitStatus::config, std::string("environment ") + k.env + ": expected " +
                                          knob_kind(k) + ", got \"" + v + "\"");
    }
    read.insert(k.key);
  }
  return read;
}

void check_knobs(const PolicyOptions& o, const std::set<std::string>& from_env) {
  const auto problems = knob_problems(o);
  if (problems.empty()) return;
  auto name = [&](const Knob& k) {
    return from_env.count(k.key) ? std::string("environment ") + k.env : std::string(k.flag);
  };
  const KnobProblem& p = problems.front();
  throw Error(from_env.count(p.knob->key) ? ExitStatus::config : ExitStatus::usage,
              describe(p, name));
}

std::map<std::string, std::string> knob_environment(const PolicyOptions& o) {
  std::map<std::string, std::string> env;
  for (const Knob& k : knob_table()) {
    // Exact values: %g would round a configured 0.123456789 to six digits.
    if (const auto* d = std::get_if<double PolicyOptions::*>(&k.field)) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", o.**d);
      env[k.env] = buf;
    } else {
      env[k.env] = knob_text(k, o);
    }
  }
  return env;
}

namespace {

// Text as roff shows it: a dash is "\\-".
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '-') {
      out += "\\-";
    } else if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
    }
  }
  return out;
}

std::string programs(const Knob& k) {
  if (k.scope == kSolveFlag) return "sia\\-solve";
  if (k.scope == kSimulateFlag) return "sia\\-ctl simulate";
  return "sia\\-solve and sia\\-ctl simulate";
}

}  // namespace

std::string knob_config_roff() {
  std::string out;
  for (const Knob& k : knob_table()) {
    const bool boolean = std::holds_alternative<bool PolicyOptions::*>(k.field);
    out += ".TP\n.BR " + roff(k.key) + " \" (" + k.env + ")\"\n";
    out += roff(k.help) + ".\n";
    out += "The flag\n";
    out += boolean ? ".BR " + roff(k.flag) + " \", \" " + roff(std::string("--no-") + (k.flag + 2))
                   : ".B " + roff(k.flag);
    out += "\nof " + programs(k) + "; " + knob_kind(k);
    if (boolean) out += " (in the environment also 1 or 0)";
    if (!boolean && std::isfinite(k.min)) out += " " + roff(knob_range(k));
    out += ".\nDefault " + roff(knob_default(k)) + ".\n";
  }
  return out;
}

}  // namespace sia
