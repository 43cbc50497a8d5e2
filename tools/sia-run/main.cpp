// sia-run: make this node run what a placement gives it -- start, checkpoint-stop and
// restart the jobs' worker processes -- and say what runs.
#include <unistd.h>

#include "channel/agent_command.hpp"
#include "common/cli_app.hpp"
#include "common/shared_flags.hpp"
#include "ctl/agent_config.hpp"
#include "exec/commands.hpp"

int main(int argc, char** argv) {
  const char* program = "sia-run";
  CLI::App app{
      "Start, checkpoint-stop and restart the workers a placement gives this node.\n\n"
      "Examples:\n"
      "  sia-place --cluster c.toml alloc.json | sia-run apply --cluster c.toml --jobs jobs.json\n"
      "  sia-run status -o table\n"
      "  sia-run stop my-job\n"
      "  sia-run agent --connect tcp://ctl:7400 --server-key ctl.pub --secret-key node.key\n"
      "  sia-run reports --after my-job=4096 -o jsonl\n"
      "  sia-run logs my-job --rank 1 --tail 20 --follow\n"
      "  sia-run run --node t4-0 --jobs job.toml placement.json",
      program};
  sia::cli::CommonFlags common;
  sia::cli::add_common_flags(app, common, {"json", "jsonl", "table"});
  std::string state_dir;
  app.add_option("--state-dir", state_dir,
                 "Where sia-run keeps what runs (default $SIA_STATE_DIR, else "
                 "$XDG_STATE_HOME/sia/run, else ~/.local/state/sia/run)");
  app.require_subcommand(0, 1);
  app.fallthrough();  // -o, -q, -v, --state-dir also after the subcommand

  sia::exec::ApplyArgs apply;
  auto apply_flags = [&](CLI::App* sub) {
    sub->add_option("placement", apply.placement,
                    "Placement file, or - for stdin (default: stdin)");
    sub->add_option("--node", apply.node, "This node's name (default: the host name)");
    sub->add_option("--jobs", apply.jobs,
                    "Jobs or JobSpec file giving each job's command (repeatable)")
        ->allow_extra_args(false);
    sia::cli::add_cluster_flag(*sub, apply.cluster,
                               "Cluster file: checks --node, gives node addresses");
    sub->add_option("--grace", apply.settings.grace,
                    "Seconds from SIGTERM to SIGKILL when stopping a job")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
    sub->add_option("--ckpt-root", apply.settings.ckpt_root,
                    "Checkpoints in DIR/JOB (default: in the state directory)");
    sub->add_option("--report-interval", apply.settings.report_interval,
                    "Seconds between worker reports (SIA_REPORT_INTERVAL)")
        ->check(CLI::Range(0.001, 86400.0))
        ->capture_default_str();
    sub->add_option("--port-range", apply.port_range, "Ports MASTER_PORT is drawn from (LO-HI)")
        ->capture_default_str();
    sub->add_flag("--dry-run", apply.dry_run, "Print the actions without doing them");
  };
  auto* apply_cmd =
      app.add_subcommand("apply", "Start, stop and restart this node's jobs as placed, and return");
  apply_flags(apply_cmd);
  auto* run_cmd = app.add_subcommand(
      "run", "Apply in the foreground, wait for the jobs, exit with their status");
  apply_flags(run_cmd);

  sia::exec::StopArgs stop;
  auto* stop_cmd = app.add_subcommand("stop", "Checkpoint-stop jobs and hold them");
  stop_cmd->add_option("job", stop.jobs, "Jobs to stop")->required();
  stop_cmd->add_option("--grace", stop.grace, "Seconds from SIGTERM to SIGKILL")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  stop_cmd->add_flag("--dry-run", stop.dry_run, "Print the actions without doing them");

  sia::exec::StatusArgs status;
  auto* status_cmd = app.add_subcommand("status", "Show the jobs of this node");
  status_cmd->add_option("job", status.jobs, "Jobs to show (default: all)");

  sia::exec::ReportsArgs reports;
  auto* reports_cmd = app.add_subcommand(
      "reports", "Print the workers' report lines, each job's from a byte offset on");
  reports_cmd
      ->add_option("--after", reports.after,
                   "JOB=OFFSET: only JOB's lines that start at OFFSET or later "
                   "(repeatable)")
      ->allow_extra_args(false);

  sia::exec::LogsArgs logs;
  auto* logs_cmd = app.add_subcommand("logs", "Print a rank's log (its output, all generations)");
  logs_cmd->add_option("job", logs.request.job, "The job")->required();
  logs_cmd->add_option("--rank", logs.request.rank, "The rank whose log to print")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  logs_cmd->add_option("--tail", logs.request.tail, "Only the last N lines")
      ->check(CLI::Range(0, 1 << 30));
  logs_cmd->add_flag("--follow", logs.follow,
                     "Keep printing what the rank writes until the job ends on this node");
  auto* offset_opt =
      logs_cmd->add_option("--offset", logs.request.offset, "Only the bytes from OFFSET on")
          ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 62));
  logs_cmd
      ->add_option("--limit", logs.request.limit,
                   "Read at most BYTES at a time, 1 to 1048576 (-o json prints one read)")
      ->check(CLI::Range(std::int64_t{1}, sia::exec::kMaxLogRead))
      ->capture_default_str();
  offset_opt->excludes("--tail");

  sia::channel::AgentArgs agent;
  auto* agent_cmd = app.add_subcommand(
      "agent", "Serve the controller: apply its assignments, forward reports, fence");
  std::string agent_config;
  agent_cmd->add_option("--config", agent_config,
                        "Configuration file whose [agent] section gives the settings no flag "
                        "gives (default $SIA_CONFIG; see sia-config(5))");
  agent_cmd->add_option("--connect", agent.connect,
                        "The controller's endpoint (tcp://HOST:PORT, ipc://PATH; default: "
                        "agent.connect)");
  agent_cmd->add_option("--node", agent.node,
                        "This node's name (default: agent.node, else the host name)");
  agent_cmd->add_option("--server-key", agent.server_key,
                        "The controller's public key file (CURVE; with --secret-key; default: "
                        "agent.server_key)");
  agent_cmd->add_option("--secret-key", agent.secret_key,
                        "This agent's key file, mode 0600 (CURVE; with --server-key; default: "
                        "agent.secret_key)");
  sia::cli::add_cluster_flag(*agent_cmd, agent.cluster,
                             "Cluster file giving this node's inventory");
  agent_cmd
      ->add_option("--heartbeat-interval", agent.heartbeat_interval, "Seconds between heartbeats")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  agent_cmd
      ->add_option("--heartbeat-liveness", agent.heartbeat_liveness,
                   "Missed heartbeats before the controller counts as lost")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  agent_cmd
      ->add_option("--fence-after", agent.fence_after,
                   "Seconds without the controller before the jobs are checkpoint-stopped")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  agent_cmd->add_flag("--keep-jobs", agent.keep_jobs,
                      "On SIGTERM or SIGINT leave the jobs running (default: stop them first)");
  agent_cmd
      ->add_option("--grace", agent.grace,
                   "Seconds from SIGTERM to SIGKILL when a job is stopped (apply's)")
      ->check(CLI::Range(0.0, 1e6));
  agent_cmd->add_option("--ckpt-root", agent.ckpt_root,
                        "Checkpoints in DIR/JOB, a directory every node sees (apply's)");
  agent_cmd
      ->add_option("--report-interval", agent.report_interval,
                   "Seconds between worker reports (apply's)")
      ->check(CLI::Range(0.001, 86400.0));

  sia::exec::SuperviseArgs supervise;  // started by apply and run, not by people
  auto* supervise_cmd = app.add_subcommand("supervise", "");
  supervise_cmd->group("");
  supervise_cmd->add_option("job", supervise.job)->required();
  supervise_cmd->add_option("--generation", supervise.generation)->required();

  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  return sia::cli::run(program, [&] {
    auto format = common.format();
    if (apply_cmd->parsed() || run_cmd->parsed()) {
      if (apply.placement == "-" && isatty(0)) {
        throw sia::Error(sia::ExitStatus::usage, "no placement given and stdin is a terminal");
      }
      apply.state_dir = state_dir;
      apply.format = format;
      return apply_cmd->parsed() ? sia::exec::run_apply(apply) : sia::exec::run_foreground(apply);
    }
    if (stop_cmd->parsed()) {
      stop.state_dir = state_dir;
      stop.format = format;
      return sia::exec::run_stop(stop);
    }
    if (status_cmd->parsed()) {
      status.state_dir = state_dir;
      status.format = format;
      return sia::exec::run_status(status);
    }
    if (reports_cmd->parsed()) {
      reports.state_dir = state_dir;
      reports.format = format;
      return sia::exec::run_reports(reports);
    }
    if (logs_cmd->parsed()) {
      logs.state_dir = state_dir;
      logs.document = app.count("--output") > 0;
      return sia::exec::run_logs(logs);
    }
    if (agent_cmd->parsed()) {
      agent.state_dir = state_dir;
      sia::ctl::apply_agent_config(agent, agent_config);
      return sia::channel::run_agent(agent);
    }
    if (supervise_cmd->parsed()) {
      supervise.state_dir = state_dir.empty() ? sia::exec::default_state_dir() : state_dir;
      return sia::exec::run_supervise(supervise);
    }
    throw sia::Error(
        sia::ExitStatus::usage,
        "expected a subcommand: apply, run, stop, status, reports, logs or agent (see sia-run "
        "--help)");
  });
}
