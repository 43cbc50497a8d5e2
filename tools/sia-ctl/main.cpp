// sia-ctl: the scheduler's control program. `simulate` runs the trace-driven simulator;
// serve (lib/serve/serve_command.hpp), round, submit, status, history, cancel, hold,
// release, requeue, nodes, explain and config drive the controller (lib/ctl/commands.hpp).
#include "app/simulate.hpp"
#include "channel/keygen_command.hpp"
#include "common/cli_app.hpp"
#include "common/policy_flags.hpp"
#include "common/shared_flags.hpp"
#include "ctl/commands.hpp"
#include "serve/remote_backend.hpp"
#include "serve/serve_command.hpp"

int main(int argc, char** argv) {
  const char* program = "sia-ctl";
  CLI::App app{
      "Run and inspect the sia scheduler.\n\n"
      "Examples:\n"
      "  sia-ctl simulate                      # bundled cluster and workload\n"
      "  sia-ctl simulate --workload data/workloads/saturn --compat reference -o json\n"
      "  sia-ctl simulate --cluster c.toml --workload jobs.csv --jobs results.jsonl\n"
      "  sia-ctl submit job.toml && sia-ctl round --cluster c.toml && sia-ctl status\n"
      "  sia-ctl serve --config /etc/sia/config.toml\n"
      "  sia-ctl --connect tcp://ctl:7400 --server-key ctl.pub --secret-key me.key status\n"
      "  sia-ctl --state-dir /var/lib/sia/ctl explain my-job",
      program};
  sia::cli::CommonFlags common;
  common.output = "table";
  sia::cli::add_common_flags(app, common, {"table", "json", "jsonl", "csv"});
  app.require_subcommand(0, 1);
  app.fallthrough();
  std::string config_file, state_dir;
  app.add_option("--config", config_file,
                 "Configuration file (default $SIA_CONFIG; see sia-config(5))");
  app.add_option("--state-dir", state_dir,
                 "Controller state directory (default: controller.state_dir, "
                 "$SIA_CTL_STATE_DIR, else $XDG_STATE_HOME/sia/ctl)");
  std::string connect, server_key, secret_key;
  app.add_option("--connect", connect,
                 "Clients: ask the controller at this endpoint (sia-ctl serve) instead of "
                 "acting on the state directory (default: client.connect)");
  app.add_option("--server-key", server_key,
                 "Clients: the controller's public key file (CURVE; default: "
                 "client.server_key)");
  app.add_option("--secret-key", secret_key,
                 "Clients: this client's key file, mode 0600 (CURVE; default: "
                 "client.secret_key)");

  sia::app::SimulateArgs sim;
  auto* s = app.add_subcommand(
      "simulate",
      "Simulate a workload on a cluster with one policy, or several side by side.\n\n"
      "Examples:\n"
      "  sia-ctl simulate\n"
      "  sia-ctl simulate --policy sia,gavel,pollux,themis --workload data/workloads/saturn\n"
      "  sia-ctl simulate --workload jobs.csv --jobs results.jsonl --events rounds.jsonl");
  sia::cli::add_cluster_flag(*s, sim.cluster, "Cluster", "the bundled sia-hetero-64");
  s->add_option("--workload", sim.workload,
                "Workload: an artifact CSV, JSON Lines of job specs, or a directory of them "
                "(default: bundled philly/workload-1)");
  s->add_option("--catalog", sim.catalog, "Model catalog directory");
  s->add_option("--policy", sim.options.policy,
                "Policy, or a comma-separated list to compare (" + sia::policy_list() + ")")
      ->capture_default_str();
  s->add_option("--round", sim.round,
                "Round length in seconds (default: the policy's, 60 s for Sia)");
  sia::cli::add_sia_objective_flags(*s, sim.options.policy_options);
  s->add_option("--time-limit", sim.options.policy_options.time_limit,
                "Solver time limit per round, seconds")
      ->capture_default_str();
  sia::cli::add_baseline_flags(*s, sim.options.policy_options);
  sia::cli::add_compat_flag(*s, sim.compat);
  s->add_option("--jobs", sim.jobs_out, "Write per-job results here (JSON Lines)");
  s->add_option("--events", sim.events_out, "Write per-round records here (JSON Lines)");
  s->add_option("--save-rounds", sim.options.save_rounds_dir,
                "Write every round's stage inputs and outputs into this directory");
  s->add_flag(
      "--no-fairness", [&](std::int64_t) { sim.options.fairness = false; },
      "Skip the isolated runs behind finish-time fairness");
  s->add_flag("--no-timing", sim.no_timing, "Report no wall-clock figures (reproducible output)");

  sia::channel::KeygenArgs keygen;
  auto* keygen_cmd =
      app.add_subcommand("keygen",
                         "Write a CURVE key pair: NAME.key (mode 0600) and NAME.pub.\n\n"
                         "Examples:\n"
                         "  sia-ctl keygen /etc/sia/keys/controller\n"
                         "  sia-ctl keygen t4-0 -o json");
  keygen_cmd->add_option("name", keygen.name, "Key name, a path prefix (NAME.key, NAME.pub)")
      ->required();
  keygen_cmd->add_flag("--force", keygen.force, "Replace existing key files");

  // The controller: one round, and the clients of the state directory.
  std::string round_cluster, round_policy;
  std::vector<std::string> stages, submit_files, status_jobs;
  std::string explain_job;
  bool dry_run = false;
  auto* round_cmd = app.add_subcommand(
      "round",
      "Run exactly one scheduling round on the state directory and exit (for cron).\n\n"
      "Examples:\n"
      "  sia-ctl round --cluster cluster.toml\n"
      "  sia-ctl round --stage solve='sia-solve --policy themis' -o json\n"
      "  * * * * * sia-ctl round -q    # crontab: exit 75 while another round runs");
  round_cmd->add_option("--cluster", round_cluster,
                        "Cluster file (default: controller.cluster, $SIA_CLUSTER)");
  round_cmd->add_option("--policy", round_policy, "Scheduling policy (default: controller.policy)");
  round_cmd
      ->add_option("--stage", stages,
                   "NAME=COMMAND: run stage estimate, solve or place as an external "
                   "program (repeatable)")
      ->allow_extra_args(false);
  round_cmd->add_flag("--dry-run", dry_run, "Decide and print the round; change nothing");
  std::string serve_cluster, serve_policy, serve_bind, serve_round;
  auto* serve_cmd = app.add_subcommand(
      "serve",
      "Run the controller: a round every controller.round seconds, the sia-run agents and "
      "the clients served on the control channel (stops on SIGTERM).\n\n"
      "Examples:\n"
      "  sia-ctl serve --config /etc/sia/config.toml\n"
      "  sia-ctl serve --cluster cluster.toml --bind tcp://127.0.0.1:7400 --round 30\n"
      "  sia-ctl serve --stage solve='sia-solve --policy themis'");
  serve_cmd->add_option("--cluster", serve_cluster,
                        "Cluster file (default: controller.cluster, $SIA_CLUSTER)");
  serve_cmd->add_option("--policy", serve_policy, "Scheduling policy (default: controller.policy)");
  serve_cmd->add_option("--bind", serve_bind,
                        "Endpoint to serve agents and clients on (default: controller.bind)");
  serve_cmd->add_option("--round", serve_round,
                        "Seconds between rounds (default: controller.round)");
  serve_cmd
      ->add_option("--stage", stages,
                   "NAME=COMMAND: run stage estimate, solve or place as an external "
                   "program (repeatable)")
      ->allow_extra_args(false);
  auto* submit_cmd = app.add_subcommand(
      "submit",
      "Submit jobs (JobSpec or Jobs files, TOML or JSON); the next round takes them in.\n\n"
      "Examples:\n"
      "  sia-ctl submit job.toml\n"
      "  sia-ctl submit -o json a.toml b.toml");
  submit_cmd->add_option("file", submit_files, "Job files, or - for stdin")->required();
  submit_cmd->add_flag("--dry-run", dry_run, "Validate and print the jobs; submit nothing");
  // status and history: which jobs.
  std::vector<std::string> filter_states, filter_users;
  std::string filter_since;
  auto add_filters = [&](CLI::App* cmd) {
    cmd->add_option("--state", filter_states,
                    "Only jobs in these states (queued, running, finished, failed, "
                    "cancelled, submitted, rejected; comma-separated or repeated)");
    cmd->add_option("--user", filter_users,
                    "Only jobs these users submitted (alice, or local:alice / client:alice)");
  };
  auto* status_cmd =
      app.add_subcommand("status",
                         "Show jobs: state, placement, progress, and why each waiting job waits\n\n"
                         "Examples:\n"
                         "  sia-ctl status\n"
                         "  sia-ctl status --state queued --user alice -o json");
  status_cmd->add_option("job", status_jobs, "Jobs to show (default: all)");
  add_filters(status_cmd);
  auto* history_cmd = app.add_subcommand(
      "history",
      "Accounting (sacct-like): per job submit, start and end, wait, GPU hours per GPU type, "
      "restarts, work lost, final state\n\n"
      "Examples:\n"
      "  sia-ctl history --since 7d\n"
      "  sia-ctl history --user alice --state finished,failed -o csv > jobs.csv");
  add_filters(history_cmd);
  history_cmd->add_option("--since", filter_since,
                          "Only jobs active since then: seconds since the epoch, a UTC date "
                          "or time (2026-12-01, 2026-12-01T08:00) or a time ago (12h, 7d)");
  // Requests on named jobs: one row each.
  struct JobRequestCommand {
    sia::ctl::JobRequest request;
    const char* help;
    std::vector<std::string> jobs;
    CLI::App* cmd = nullptr;
  };
  JobRequestCommand job_requests[] = {
      {sia::ctl::JobRequest::cancel, "Cancel jobs; the next round stops them", {}},
      {sia::ctl::JobRequest::hold,
       "Hold jobs: they are not scheduled until released (the next round stops a running "
       "one with a checkpoint)",
       {}},
      {sia::ctl::JobRequest::release, "Release held jobs: they may be scheduled again", {}},
      {sia::ctl::JobRequest::requeue,
       "Requeue running jobs: the next round stops them with a checkpoint, and they wait in "
       "the queue like any other",
       {}},
  };
  for (auto& r : job_requests) {
    const std::string name = sia::ctl::to_string(r.request);
    r.cmd = app.add_subcommand(name, r.help);
    r.cmd->add_option("job", r.jobs, "Jobs")->required();
    r.cmd->add_flag("--dry-run", dry_run,
                    std::string("Check the jobs; nothing is ") + sia::ctl::past_tense(r.request));
  }
  auto* nodes_cmd = app.add_subcommand("nodes", "Show the nodes: up or down, their jobs");
  auto* explain_cmd = app.add_subcommand(
      "explain", "Say why a job runs where it runs, or why it waits (from the last round)");
  explain_cmd->add_option("job", explain_job, "The job")->required();
  sia::ctl::LogsRequest logs;
  auto* logs_cmd = app.add_subcommand("logs",
                                      "Print a rank's log, read on the node that holds it.\n\n"
                                      "Examples:\n"
                                      "  sia-ctl logs my-job --tail 50\n"
                                      "  sia-ctl logs my-job --rank 3 --follow");
  logs_cmd->add_option("job", logs.job, "The job")->required();
  logs_cmd->add_option("--rank", logs.rank, "The rank whose log to print")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  logs_cmd->add_option("--tail", logs.tail, "Only the last N lines")->check(CLI::Range(0, 1 << 30));
  logs_cmd->add_flag("--follow", logs.follow,
                     "Keep printing what the rank writes until the job ends (or Ctrl-C)");
  auto* config_cmd =
      app.add_subcommand("config", "Print the effective settings and where each came from");

  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  return sia::cli::run(program, [&] {
    sia::ctl::CtlArgs ctl;
    if (common.format() == sia::cli::Format::csv && !history_cmd->parsed()) {
      throw sia::Error(sia::ExitStatus::usage, "-o csv: only sia-ctl history writes CSV");
    }
    ctl.sources.config_file = config_file;
    ctl.format =
        common.format() == sia::cli::Format::jsonl ? sia::cli::Format::json : common.format();
    ctl.dry_run = dry_run;
    if (!state_dir.empty()) ctl.sources.flags["controller.state_dir"] = {"--state-dir", state_dir};
    if (!round_cluster.empty()) {
      ctl.sources.flags["controller.cluster"] = {"--cluster", round_cluster};
    }
    if (!round_policy.empty()) ctl.sources.flags["controller.policy"] = {"--policy", round_policy};
    if (!serve_cluster.empty()) {
      ctl.sources.flags["controller.cluster"] = {"--cluster", serve_cluster};
    }
    if (!serve_policy.empty()) ctl.sources.flags["controller.policy"] = {"--policy", serve_policy};
    if (!serve_bind.empty()) ctl.sources.flags["controller.bind"] = {"--bind", serve_bind};
    if (!serve_round.empty()) ctl.sources.flags["controller.round"] = {"--round", serve_round};
    if (!connect.empty()) ctl.sources.flags["client.connect"] = {"--connect", connect};
    if (!server_key.empty()) ctl.sources.flags["client.server_key"] = {"--server-key", server_key};
    if (!secret_key.empty()) ctl.sources.flags["client.secret_key"] = {"--secret-key", secret_key};
    sia::serve::install_remote_backend();
    for (const auto& st : stages) {
      auto [key, command] = sia::ctl::parse_stage_flag(st);
      ctl.sources.flags[key] = {"--stage", command};
    }
    if (serve_cmd->parsed()) return sia::serve::run_serve_command(ctl);
    if (round_cmd->parsed()) return sia::ctl::run_round_command(ctl);
    if (submit_cmd->parsed()) return sia::ctl::run_submit_command(ctl, submit_files);
    sia::ctl::JobFilter filter;
    filter.states = sia::ctl::parse_state_filter(filter_states, "--state");
    filter.users = filter_users;
    if (status_cmd->parsed()) return sia::ctl::run_status_command(ctl, status_jobs, filter);
    if (history_cmd->parsed()) return sia::ctl::run_history_command(ctl, filter, filter_since);
    for (const auto& r : job_requests) {
      if (r.cmd->parsed()) return sia::ctl::run_job_request_command(ctl, r.request, r.jobs);
    }
    if (nodes_cmd->parsed()) return sia::ctl::run_nodes_command(ctl);
    if (explain_cmd->parsed()) return sia::ctl::run_explain_command(ctl, explain_job);
    if (config_cmd->parsed()) return sia::ctl::run_config_command(ctl);
    if (logs_cmd->parsed()) return sia::ctl::run_logs_command(ctl, logs);
    if (keygen_cmd->parsed()) {
      keygen.format = common.format();
      return sia::channel::run_keygen(keygen);
    }
    if (!s->parsed()) {
      throw sia::Error(sia::ExitStatus::usage,
                       "expected a subcommand: simulate, serve, round, submit, status, "
                       "history, cancel, hold, release, requeue, nodes, explain, logs, config "
                       "or keygen (see sia-ctl --help)");
    }
    sim.format = common.format();
    return sia::app::run_simulate(sim);
  });
}
