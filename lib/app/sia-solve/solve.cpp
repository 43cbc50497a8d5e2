#include "app/sia-solve/solve.hpp"

#include <chrono>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli/table.hpp"
#include "core/compat.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/goodput_matrix_reader.hpp"
#include "core/placement.hpp"
#include "os/clock.hpp"
#include "policy/knobs.hpp"

namespace sia::app {

using nlohmann::json;

static std::string solve_table(const Allocation& a, bool explain) {
  std::vector<std::string> head = {"job", "config", "goodput", "batch"};
  if (explain) head.insert(head.end(), {"effective", "value", "restart", "alternative"});
  head.push_back("note");
  cli::Table t(head);
  for (const auto& j : a.jobs) {
    std::vector<std::string> row = {j.job, j.config ? format_config(*j.config, a.cluster) : "-",
                                    j.config ? cli::fixed(j.goodput, 3) : "",
                                    j.config ? std::to_string(j.batch.global) : ""};
    if (explain) {
      const auto& e = j.explain;
      row.push_back(e && j.config ? cli::fixed(e->goodput, 3) : "");
      row.push_back(e && j.config ? cli::fixed(e->value, 4) : "");
      row.push_back(e ? cli::fixed(e->restart_factor, 3) : "");
      row.push_back(e && e->alternative ? format_config(*e->alternative, a.cluster) + " " +
                                              cli::fixed(e->alternative_goodput, 3)
                                        : "");
    }
    std::string note = j.config ? "" : "waiting: " + j.reason;
    if (a.policy == "sia" && j.explain && j.config && j.config->gpus >= j.explain->max_gpus) {
      note = "at its scale-up cap of " + std::to_string(j.explain->max_gpus) + " GPU(s)";
    }
    if (j.explain && j.explain->pinned) note = "pinned (checkpoint-restore or not preemptible)";
    row.push_back(note);
    t.add(row);
  }
  return t.render() + "status " + a.status + ", objective " + cli::fixed(a.objective, 4) +
         (a.policy != "sia" ? std::string() : ", gap " + cli::fixed(a.gap * 100, 4) + "%") +
         (a.note.empty() ? "" : " (" + a.note + ")") + "\n";
}

int run_solve(const SolveArgs& args) {
  PolicyOptions o = args.options;
  check_knobs(
      o, read_knob_environment(o, args.knob_flags, [](const char* v) { return std::getenv(v); }));
  o.quirks = policy_quirks(parse_compat(args.compat));
  auto policy = make_policy(args.policy, o);  // bad knobs are usage errors, before any input
  GoodputMatrix m = read_goodput_matrix(args.input);
  std::optional<Allocation> previous;
  if (!args.previous.empty()) {
    previous = parse_allocation(read_document(args.previous, {"Allocation"}).data());
  }
  const double t0 = os::now_seconds();
  Allocation a = policy->allocate(m, previous);
  if (a.order.empty()) a.order = m.order;
  const double secs = os::now_seconds() - t0;
  cli::debug("sia-solve", "policy " + args.policy + ": " + a.status + " in " +
                              cli::fixed(secs * 1e3, 1) + " ms, gap " + cli::fixed(a.gap, 6));
  if (args.format == cli::Format::table) {
    cli::write_stdout(solve_table(a, o.explain));
  } else {
    cli::print_document("Allocation", json{{"generator", "sia-solve"}}, allocation_to_json(a));
  }
  return 0;
}

}  // namespace sia::app
