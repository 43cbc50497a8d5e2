#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include "exec/temp_dir.hpp"
#include "policy/knobs.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

// Roff as plain text: font escapes gone, "\-" a dash.
std::string plain(std::string s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      if (s[i + 1] == '-') {
        out += '-';
        ++i;
      } else if (s[i + 1] == 'f' && i + 2 < s.size()) {
        i += 2;  // \fB, \fI, \fR, \fP
      } else if (s[i + 1] == '&') {
        ++i;
      } else {
        out += s[i];
      }
    } else if (s[i] != '"') {
      out += s[i];
    }
  }
  return out;
}

// The paragraph of a page that documents knob `k`'s flag (from its tag, after ".TP":
// ".BI --flag ARG", or for a boolean ".BR --flag , --no-flag"; to the next paragraph), as
// plain text; "" when none.
std::string entry(const std::string& page, const Knob& k) {
  const bool boolean = std::holds_alternative<bool PolicyOptions::*>(k.field);
  const std::string tag = boolean ? ".BR " : ".BI ";
  std::istringstream in(page);
  std::string line, text, previous;
  bool inside = false;
  for (; std::getline(in, line); previous = line) {
    const std::string p = plain(line);
    const bool macro = !line.empty() && line[0] == '.';
    if (inside && macro &&
        (line.rfind(".TP", 0) == 0 || line.rfind(".SH", 0) == 0 || line.rfind(".SS", 0) == 0 ||
         line.rfind(".PP", 0) == 0)) {
      break;
    }
    if (!inside && previous.rfind(".TP", 0) == 0 && line.rfind(tag, 0) == 0) {
      std::istringstream words(p);
      std::string macro_name, first;
      words >> macro_name >> first;
      if (first == k.flag) inside = true;
    }
    if (inside) text += (macro ? p.substr(p.find(' ') + 1) : p) + "\n";
  }
  return text;
}

// Whether a flag's paragraph states `value` as the default, in one of the pages' phrasings.
bool states_default(const std::string& text, const Knob& k) {
  const std::string d = knob_default(k);
  if (d == "true") return text.find("On by default") != std::string::npos;
  if (d == "false") return text.find("Off by default") != std::string::npos;
  for (const std::string& form :
       {"Default " + d + ".", "Default " + d + ";", "Default " + d + " ", "Default " + d + ",",
        d + " (the default)", "Default " + d + "\n"}) {
    if (text.find(form) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("every knob has a key, a variable and a flag, each its own", "[knobs]") {
  std::set<std::string> keys, envs, flags;
  for (const Knob& k : knob_table()) {
    INFO(k.key);
    CHECK(keys.insert(k.key).second);
    CHECK(envs.insert(k.env).second);
    CHECK(flags.insert(k.flag).second);
    // The flag is the key spelled with dashes; the variable, SIA_CTL_ and the key in capitals.
    std::string flag = std::string("--") + k.key, env = std::string("SIA_CTL_") + k.key;
    for (auto& c : flag) c = c == '_' ? '-' : c;
    for (auto& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(k.flag == flag);
    CHECK(k.env == env);
    CHECK(k.scope != 0);
    CHECK(*k.help);
    CHECK(*k.what);
    CHECK(find_knob(k.key) == &k);
    CHECK(find_knob(k.flag) == &k);
  }
  CHECK(keys.size() == 21);
}

TEST_CASE("the defaults are in their ranges, and a value out of range names the knob", "[knobs]") {
  CHECK(knob_problems(PolicyOptions{}).empty());
  for (const Knob& k : knob_table()) {
    if (!std::isfinite(k.max) && !std::isfinite(k.min)) continue;
    PolicyOptions o;
    const double outside = std::isfinite(k.max) ? k.max + 1 : k.min - 1;
    if (!set_knob(k, o, outside)) continue;  // a type that cannot hold it (bool, unsigned)
    INFO(k.key);
    const auto problems = knob_problems(o);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].knob == &k);
    CHECK(describe(problems[0], [](const Knob& x) { return std::string(x.flag); }) ==
          std::string(k.flag) + ": must be " + knob_range(k));
  }
  PolicyOptions o;
  o.themis_f = 2;
  CHECK(test::error_of([&] { validate_policy_options(o); }) ==
        std::pair<int, std::string>{64, "--themis-f: must be between 0 and 1"});
  // An unbounded knob must still be finite.
  o = PolicyOptions{};
  o.pollux_p = std::numeric_limits<double>::infinity();
  CHECK(test::error_of([&] { validate_policy_options(o); }) ==
        std::pair<int, std::string>{64, "--pollux-p: must be a finite number"});
  o = PolicyOptions{};
  o.lambda_a = std::numeric_limits<double>::quiet_NaN();
  CHECK(test::error_of([&] { validate_policy_options(o); }).second ==
        "--lambda-a: must be a finite number >= 0");
  o = PolicyOptions{};
  o.time_limit = 0;
  CHECK(test::error_of([&] { validate_policy_options(o); }).second ==
        "--time-limit: must be > 0 seconds and at most 86400");
}

TEST_CASE("the sign rule names both knobs as the caller writes them", "[knobs]") {
  PolicyOptions o;
  o.p = 1;  // lambda_n stays 1.1: the same sign
  const auto problems = knob_problems(o);
  REQUIRE(problems.size() == 1);
  const std::string msg = describe(
      problems[0], [](const Knob& k) { return "controller." + std::string(k.key) + " (f.toml)"; });
  CHECK(msg.rfind("controller.lambda_n (f.toml): must have the opposite sign of controller.p "
                  "(f.toml) (p = 1)",
                  0) == 0);
}

TEST_CASE("knobs are set from text of their type only", "[knobs]") {
  PolicyOptions o;
  CHECK(set_knob(*find_knob("p"), o, std::string("0.25")));
  CHECK(o.p == 0.25);
  CHECK_FALSE(set_knob(*find_knob("p"), o, std::string("x")));
  CHECK_FALSE(set_knob(*find_knob("p"), o, std::string("")));
  CHECK(o.p == 0.25);
  CHECK_FALSE(set_knob(*find_knob("node_limit"), o, std::string("1.5")));
  CHECK(set_knob(*find_knob("node_limit"), o, std::string("7")));
  CHECK(o.node_limit == 7);
  CHECK_FALSE(set_knob(*find_knob("seed"), o, std::string("-1")));
  CHECK(set_knob(*find_knob("restart_remaining"), o, std::string("0")));
  CHECK_FALSE(o.restart_remaining);
  CHECK_FALSE(set_knob(*find_knob("restart_remaining"), o, std::string("yes")));
}

TEST_CASE("knobs come from the environment unless given as flags", "[knobs]") {
  std::map<std::string, std::string> env = {
      {"SIA_CTL_P", "1"}, {"SIA_CTL_LAMBDA_N", "-2"}, {"SIA_CTL_THEMIS_F", "0.5"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  PolicyOptions o;
  const auto read = read_knob_environment(o, {"themis_f"}, getenv);
  CHECK(read == std::set<std::string>{"p", "lambda_n"});
  CHECK(o.p == 1);
  CHECK(o.lambda_n == -2);
  CHECK(o.themis_f == 0.8);  // given as a flag: the flag's value stays

  env["SIA_CTL_SEED"] = "many";
  PolicyOptions bad;
  CHECK(test::error_of([&] { read_knob_environment(bad, {}, getenv); }) ==
        std::pair<int, std::string>{78,
                                    "environment SIA_CTL_SEED: expected an integer, got \"many\""});

  // A range problem names the variable (78) when the value came from it, else the flag (64).
  PolicyOptions o2;
  o2.lambda_n = 0.5;
  CHECK(test::error_of([&] { check_knobs(o2, {"lambda_n"}); }).first == 78);
  CHECK(test::error_of([&] {
          check_knobs(o2, {"lambda_n"});
        }).second.rfind("environment SIA_CTL_LAMBDA_N: ", 0) == 0);
  CHECK(test::error_of([&] { check_knobs(o2, {}); }).first == 64);
}

TEST_CASE("an external solve stage receives every knob", "[knobs]") {
  PolicyOptions o;
  o.p = 0.123456789;
  o.restart_remaining = false;
  const auto env = knob_environment(o);
  CHECK(env.size() == knob_table().size());
  CHECK(env.at("SIA_CTL_P") == "0.123456789");
  CHECK(env.at("SIA_CTL_RESTART_REMAINING") == "false");
  CHECK(env.at("SIA_CTL_SEED") == "1");
  // What it receives reads back to the same values.
  PolicyOptions back;
  read_knob_environment(back, {}, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  CHECK(back.p == o.p);
  CHECK_FALSE(back.restart_remaining);
}

TEST_CASE("the man pages agree with the knob table", "[knobs][man]") {
  const std::string man = test::source_dir() + "/man/";
  // sia-config(5): the knobs' entries are the table's, as made.
  const std::string config = exec::test::slurp(man + "sia-config.5");
  const auto begin = config.find(std::string(kManBegin) + "\n");
  const auto end = config.find(std::string(kManEnd) + "\n");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string made = knob_config_roff();
  const std::size_t from = begin + std::string(kManBegin).size() + 1;
  if (config.substr(from, end - from) != made && std::getenv("SIA_UPDATE_MAN")) {
    std::ofstream(man + "sia-config.5") << config.substr(0, from) + made + config.substr(end);
  }
  CHECK(config.substr(from, end - from) == made);
  // sia-solve(1) and sia-ctl(1): each flag's paragraph states the table's default.
  for (const auto& [page, scope] :
       {std::pair{std::string("sia-solve.1"), kSolveFlag}, {"sia-ctl.1", kSimulateFlag}}) {
    const std::string text = exec::test::slurp(man + page);
    for (const Knob& k : knob_table()) {
      if (!(k.scope & scope)) continue;
      const std::string e = entry(text, k);
      INFO(page << " " << k.flag << ":\n" << e);
      CHECK_FALSE(e.empty());
      CHECK(states_default(e, k));
    }
  }
}
