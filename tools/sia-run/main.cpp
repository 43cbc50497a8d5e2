// sia-run: make this node run what a placement gives it -- start, checkpoint-stop and
// restart the jobs' worker processes -- and say what runs.
#include <unistd.h>

#include "app/sia-run/agent_command.hpp"
#include "app/sia-run/agent_config.hpp"
#include "app/sia-run/commands.hpp"
#include "common/setting_flags.hpp"
#include "common/shared_flags.hpp"
#include "common/subcommands.hpp"

namespace {

struct Flags {
  sia::cli::CommonFlags common;
  bool output_given = false;  // -o given (sia-run logs: a document, not the log's bytes)
  std::string state_dir;
  sia::exec::ApplyArgs apply;
  sia::exec::StopArgs stop;
  sia::exec::StatusArgs status;
  sia::exec::ReportsArgs reports;
  sia::exec::LogsArgs logs;
  sia::channel::AgentArgs agent;
  std::string agent_config;
  sia::ctl::SettingFlags agent_settings;  // --connect, --node, ...: by configuration key
  sia::exec::SuperviseArgs supervise;
};

// apply and run.
void add_apply_flags(CLI::App& sub, Flags& f) {
  auto& apply = f.apply;
  sub.add_option("placement", apply.placement, "Placement file, or - for stdin (default: stdin)");
  sub.add_option("--node", apply.node, "This node's name (default: the host name)");
  sub.add_option("--jobs", apply.jobs,
                 "Jobs or JobSpec file giving each job's command (repeatable)")
      ->allow_extra_args(false);
  sia::cli::add_cluster_flag(sub, apply.cluster,
                             "Cluster file: checks --node, gives node addresses");
  sub.add_option("--grace", apply.settings.grace,
                 "Seconds from SIGTERM to SIGKILL when stopping a job")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  sub.add_option("--ckpt-root", apply.settings.ckpt_root,
                 "Checkpoints in DIR/JOB (default: in the state directory)");
  sub.add_option("--report-interval", apply.settings.report_interval,
                 "Seconds between worker reports (SIA_REPORT_INTERVAL)")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  sub.add_option("--port-range", apply.port_range, "Ports MASTER_PORT is drawn from (LO-HI)")
      ->capture_default_str();
  sub.add_flag("--dry-run", apply.dry_run, "Print the actions without doing them");
}

sia::exec::ApplyArgs& apply_args(Flags& f) {
  if (f.apply.placement == "-" && isatty(0)) {
    throw sia::Error(sia::ExitStatus::usage, "no placement given and stdin is a terminal");
  }
  f.apply.state_dir = f.state_dir;
  f.apply.format = f.common.format();
  return f.apply;
}

// stop, status, reports: the state directory and the format, then the library's command.
template <auto Args, auto Run>
int run_in_state_dir(Flags& f) {
  auto& args = f.*Args;
  args.state_dir = f.state_dir;
  args.format = f.common.format();
  return Run(args);
}

void add_stop_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.stop.jobs, "Jobs to stop")->required();
  cmd.add_option("--grace", f.stop.grace, "Seconds from SIGTERM to SIGKILL")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd.add_flag("--dry-run", f.stop.dry_run, "Print the actions without doing them");
}

void add_status_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.status.jobs, "Jobs to show (default: all)");
}

void add_reports_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("--after", f.reports.after,
                 "JOB=OFFSET: only JOB's lines that start at OFFSET or later "
                 "(repeatable)")
      ->allow_extra_args(false);
}

void add_logs_flags(CLI::App& cmd, Flags& f) {
  auto& logs = f.logs;
  cmd.add_option("job", logs.request.job, "The job")->required();
  cmd.add_option("--rank", logs.request.rank, "The rank whose log to print")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  cmd.add_option("--tail", logs.request.tail, "Only the last N lines")
      ->check(CLI::Range(0, 1 << 30));
  cmd.add_flag("--follow", logs.follow,
               "Keep printing what the rank writes until the job ends on this node");
  auto* offset_opt =
      cmd.add_option("--offset", logs.request.offset, "Only the bytes from OFFSET on")
          ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 62));
  cmd.add_option("--limit", logs.request.limit,
                 "Read at most BYTES at a time, 1 to 1048576 (-o json prints one read)")
      ->check(CLI::Range(std::int64_t{1}, sia::exec::kMaxLogRead))
      ->capture_default_str();
  offset_opt->excludes("--tail");
}

int run_logs(Flags& f) {
  f.logs.state_dir = f.state_dir;
  f.logs.document = f.output_given;
  return sia::exec::run_logs(f.logs);
}

void add_agent_flags(CLI::App& cmd, Flags& f) {
  auto& agent = f.agent;
  cmd.add_option("--config", f.agent_config,
                 "Configuration file whose [agent] section gives the settings no flag "
                 "gives (default $SIA_CONFIG; see sia-config(5))");
  using sia::cli::add_setting_flag;
  add_setting_flag(cmd, f.agent_settings, "agent.connect",
                   "The controller's endpoint, tcp://HOST:PORT or ipc://PATH");
  add_setting_flag(cmd, f.agent_settings, "agent.node", "This node's name", "the host name");
  add_setting_flag(cmd, f.agent_settings, "agent.server_key",
                   "The controller's public key file, for CURVE with --secret-key");
  add_setting_flag(cmd, f.agent_settings, "agent.secret_key",
                   "This agent's key file, mode 0600, for CURVE with --server-key");
  add_setting_flag(cmd, f.agent_settings, "agent.controller_user",
                   "With ipc://, the user (name or uid) the controller runs as, trusted "
                   "besides root and this user to own the socket's directories",
                   "none");
  sia::cli::add_cluster_flag(cmd, agent.cluster, "Cluster file giving this node's inventory");
  cmd.add_option("--heartbeat-interval", agent.heartbeat_interval, "Seconds between heartbeats")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  cmd.add_option("--heartbeat-liveness", agent.heartbeat_liveness,
                 "Missed heartbeats before the controller counts as lost")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--fence-after", agent.fence_after,
                 "Seconds without the controller before the jobs are checkpoint-stopped")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  cmd.add_flag("--keep-jobs", agent.keep_jobs,
               "On SIGTERM or SIGINT leave the jobs running (default: stop them first)");
  cmd.add_option("--grace", agent.grace,
                 "Seconds from SIGTERM to SIGKILL when a job is stopped (apply's; part of "
                 "the agent's lease)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd.add_option("--ckpt-root", agent.ckpt_root,
                 "Checkpoints in DIR/JOB, a directory every node sees (apply's)");
  cmd.add_option("--report-interval", agent.report_interval,
                 "Seconds between worker reports (apply's)")
      ->check(CLI::Range(0.001, 86400.0));
}

int run_agent(Flags& f) {
  f.agent_settings["agent.state_dir"] = f.state_dir;
  sia::ctl::apply_agent_config(f.agent, f.agent_config, f.agent_settings);
  return sia::channel::run_agent(f.agent);
}

// Started by apply and run, not by people.
void add_supervise_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.supervise.job)->required();
  cmd.add_option("--generation", f.supervise.generation)->required();
}

int run_supervise(Flags& f) {
  f.supervise.state_dir = f.state_dir.empty() ? sia::exec::default_state_dir() : f.state_dir;
  return sia::exec::run_supervise(f.supervise);
}

void note_output_flag(const CLI::App& app, Flags& f) {
  f.output_given = app.count("--output") > 0;
}

const sia::cli::Subcommand<Flags> kSubcommands[] = {
    {"apply", "Start, stop and restart this node's jobs as placed, and return", add_apply_flags,
     [](Flags& f) { return sia::exec::run_apply(apply_args(f)); }},
    {"run", "Apply in the foreground, wait for the jobs, exit with their status", add_apply_flags,
     [](Flags& f) { return sia::exec::run_foreground(apply_args(f)); }},
    {"stop", "Checkpoint-stop jobs and hold them", add_stop_flags,
     run_in_state_dir<&Flags::stop, sia::exec::run_stop>},
    {"status", "Show the jobs of this node", add_status_flags,
     run_in_state_dir<&Flags::status, sia::exec::run_status>},
    {"reports", "Print the workers' report lines, each job's from a byte offset on",
     add_reports_flags, run_in_state_dir<&Flags::reports, sia::exec::run_reports>},
    {"logs", "Print a rank's log (its output, all generations)", add_logs_flags, run_logs},
    {"agent", "Serve the controller: apply its assignments, forward reports, fence",
     add_agent_flags, run_agent},
    {"supervise", "", add_supervise_flags, run_supervise},
};

}  // namespace

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
  Flags flags;
  sia::cli::add_common_flags(app, flags.common, {"json", "jsonl", "table"});
  app.add_option("--state-dir", flags.state_dir,
                 "Where sia-run keeps what runs (default $SIA_STATE_DIR, else "
                 "$XDG_STATE_HOME/sia/run, else ~/.local/state/sia/run)");
  return sia::cli::run_subcommands(app, argc, argv, flags.common, program, kSubcommands, flags,
                                   note_output_flag);
}
