// sia-ctl: the scheduler's control program. `simulate` runs the trace-driven simulator.
#include "app/simulate.hpp"
#include "common/cli_app.hpp"
#include "common/policy_flags.hpp"

int main(int argc, char** argv) {
  const char* program = "sia-ctl";
  CLI::App app{
      "Run and inspect the sia scheduler.\n\n"
      "Examples:\n"
      "  sia-ctl simulate                      # bundled cluster and workload\n"
      "  sia-ctl simulate --workload data/workloads/saturn --compat reference -o json\n"
      "  sia-ctl simulate --cluster c.toml --workload jobs.csv --jobs results.jsonl",
      program};
  sia::cli::CommonFlags common;
  common.output = "table";
  sia::cli::add_common_flags(app, common, {"table", "json", "jsonl"});
  app.require_subcommand(0, 1);
  app.fallthrough();

  sia::app::SimulateArgs sim;
  auto* s = app.add_subcommand(
      "simulate",
      "Simulate a workload on a cluster with one policy, or several side by side.\n\n"
      "Examples:\n"
      "  sia-ctl simulate\n"
      "  sia-ctl simulate --policy sia,gavel,pollux,themis --workload data/workloads/saturn\n"
      "  sia-ctl simulate --workload jobs.csv --jobs results.jsonl --events rounds.jsonl");
  s->add_option("--cluster", sim.cluster,
                "Cluster (default $SIA_CLUSTER, else the bundled sia-hetero-64)");
  s->add_option("--workload", sim.workload,
                "Workload: an artifact CSV, JSON Lines of job specs, or a directory of them "
                "(default: bundled philly/workload-1)");
  s->add_option("--catalog", sim.catalog, "Model catalog directory");
  s->add_option("--policy", sim.options.policy,
                "Policy, or a comma-separated list to compare (sia, gavel, pollux, themis, "
                "ftf-lp, fifo, srtf)")
      ->capture_default_str();
  s->add_option("--round", sim.options.round,
                "Round length in seconds (default: the policy's, 60 s for Sia)");
  s->add_option("--p", sim.options.policy_options.p, "Sia's fairness power")->capture_default_str();
  s->add_option("--lambda-n", sim.options.policy_options.lambda_n, "Sia's lambda_n")
      ->capture_default_str();
  s->add_option("--lambda-a", sim.options.policy_options.lambda_a, "Sia's lambda_a")
      ->capture_default_str();
  s->add_option("--time-limit", sim.options.policy_options.time_limit,
                "Solver time limit per round, seconds")
      ->capture_default_str();
  sia::cli::add_baseline_flags(*s, sim.options.policy_options);
  s->add_option("--compat", sim.compat, "Behaviour profile")
      ->check(CLI::IsMember({"default", "reference"}))
      ->capture_default_str();
  s->add_option("--jobs", sim.jobs_out, "Write per-job results here (JSON Lines)");
  s->add_option("--events", sim.events_out, "Write per-round records here (JSON Lines)");
  s->add_option("--save-rounds", sim.options.save_rounds_dir,
                "Write every round's stage inputs and outputs into this directory");
  s->add_flag(
      "--no-fairness", [&](std::int64_t) { sim.options.fairness = false; },
      "Skip the isolated runs behind finish-time fairness");
  s->add_flag("--no-timing", sim.no_timing, "Report no wall-clock figures (reproducible output)");

  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  return sia::cli::run(program, [&] {
    if (!s->parsed()) {
      throw sia::Error(sia::ExitStatus::usage,
                       "expected a subcommand: simulate (see sia-ctl --help)");
    }
    sim.format = common.format();
    return sia::app::run_simulate(sim);
  });
}
