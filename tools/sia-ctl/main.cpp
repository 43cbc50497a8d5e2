// sia-ctl: the scheduler's control program. `simulate` runs the trace-driven simulator,
// `plot` draws its results or the state directory's rounds; serve, round, submit, status,
// history, cancel, hold,
// release, requeue, nodes, explain, logs, config and fsck drive the controller,
// slurm-cluster reads the cluster from Slurm
// (lib/app/sia-ctl/); keygen writes CURVE keys. Each is a row of kSubcommands
// (common/subcommands.hpp), which drives the CLI11 subcommands, dispatch and usage error.
#include "app/sia-ctl/commands.hpp"
#include "app/sia-ctl/keygen_command.hpp"
#include "app/sia-ctl/plot.hpp"
#include "app/sia-ctl/serve_command.hpp"
#include "app/sia-ctl/simulate.hpp"
#include "common/knob_flags.hpp"
#include "common/setting_flags.hpp"
#include "common/shared_flags.hpp"
#include "common/subcommands.hpp"
#include "serve/remote_backend.hpp"

namespace {

struct Flags {
  sia::cli::CommonFlags common;
  std::string config_file;
  sia::ctl::SettingFlags settings;  // --state-dir, --cluster, ...: by configuration key
  sia::ctl::CtlArgs ctl;            // from the flags above and the subcommand's, before it runs
  sia::app::SimulateArgs sim;
  sia::app::PlotArgs plot;
  sia::channel::KeygenArgs keygen;
  std::vector<std::string> stages;  // round, serve
  bool dry_run = false;
  sia::ctl::SubmitFlags submit;
  std::vector<std::string> jobs;                         // status, cancel, hold, ...
  std::vector<std::string> filter_states, filter_users;  // status, history
  std::string since;                                     // history
  std::string explain_job;
  sia::ctl::LogsRequest logs;
  bool repair = false;  // fsck
  std::string write;    // slurm-cluster
};

void add_simulate_flags(CLI::App& s, Flags& f) {
  auto& sim = f.sim;
  // Not $SIA_CLUSTER (the live cluster's): the default workload is the bundled cluster's.
  s.add_option("--cluster", sim.cluster,
               "Cluster (default: the bundled sia-hetero-64; $SIA_CLUSTER is not read)");
  s.add_option("--workload", sim.workload,
               "Workload: an artifact CSV, JSON Lines of job specs, or a directory of them "
               "(default: bundled philly/workload-1)");
  s.add_option("--catalog", sim.catalog, "Model catalog directory");
  s.add_option("--policy", sim.options.policy,
               "Policy, or a comma-separated list to compare (" + sia::policy_list() + ")")
      ->capture_default_str();
  s.add_option("--round", sim.round,
               "Round length in seconds (default: the policy's, 60 s for Sia)");
  sia::cli::add_knob_flags(s, sim.options.policy_options, sia::kSimulateFlag);
  sia::cli::add_compat_flag(s, sim.compat);
  s.add_option("--jobs", sim.jobs_out, "Write per-job results here (JSON Lines)");
  s.add_option("--events", sim.events_out, "Write per-round records here (JSON Lines)");
  s.add_option("--report", sim.report_out,
               "Also write the HTML report of the run here (as sia-ctl plot draws it)");
  s.add_option("--save-rounds", sim.options.save_rounds_dir,
               "Write every round's stage inputs and outputs into this directory");
  s.add_flag(
      "--no-fairness", [&sim](std::int64_t) { sim.options.fairness = false; },
      "Skip the isolated runs behind finish-time fairness");
  s.add_option("--profiling", sim.profiling,
               "What Sia knows of a job before it runs: none, bootstrap (single-GPU "
               "throughputs per type) or oracle (every measured placement)")
      ->capture_default_str();
  sia::cli::add_profile_store_flag(s, sim.profile_store);
  s.add_option("--rigid-share", sim.rigid_share,
               "Make this fraction of the jobs rigid (tuned GPU count and batch; a seeded draw)")
      ->capture_default_str();
  s.add_option("--strong-scaling-share", sim.strong_share,
               "Make this fraction of the jobs strong-scaling (tuned batch, up to the tuned "
               "GPU count; a seeded draw)")
      ->capture_default_str();
  s.add_option("--category-seed", sim.category_seed,
               "Seed of the --rigid-share and --strong-scaling-share draw")
      ->capture_default_str();
  s.add_option("--deadlines", sim.deadlines,
               "SHARE[:SEED]: make this fraction of the jobs guaranteed, each with a deadline "
               "of submission + f x its ideal time on its fair share, f uniform in 0.5-2 "
               "(a seeded draw)");
  s.add_option("--reservations", sim.reservations,
               "FILE: keep the nodes its reservations hold out of training (sia-formats(5) "
               "RESERVATIONS); report the GPU hours lent and the take-backs");
  s.add_option("--horizon", sim.horizon,
               "Stop after this many simulated seconds; unfinished jobs are left out");
  s.add_option("--scale", sim.scale,
               "Repeat every job K times and give every node group K times the nodes")
      ->capture_default_str();
  s.add_flag("--no-timing", sim.no_timing, "Report no wall-clock figures (reproducible output)");
  s.add_option("--max-jobs", sim.max_jobs, "Refuse a workload of more jobs than this")
      ->check(CLI::Range(1L, 100000000L))
      ->capture_default_str();
  s.add_option("--searches", sim.searches,
               "Group this share of the jobs (0 to 1) into hyper-parameter searches of 8-100 "
               "trials run with successive halving (eta 2, 3 phases)");
  s.add_option("--search-seed", sim.search_seed, "Seed of --searches' grouping and sampling")
      ->capture_default_str();
  s.add_option("--search-scheduler", sim.search_scheduler,
               "App scheduler of --searches' apps: successive-halving (eta 2, 3 phases) or "
               "hyperband (eta 2, 3 brackets)")
      ->check(CLI::IsMember({"successive-halving", "hyperband"}))
      ->capture_default_str();
}

int run_simulate(Flags& f) {
  f.sim.format = f.common.format();
  return sia::app::run_simulate(f.sim);
}

void add_plot_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("file", f.plot.input,
                 "A SimResult document (simulate -o json) or a Series document; with none, "
                 "nor --jobs or --events: the state directory's rounds");
  cmd.add_option("--jobs", f.plot.jobs, "Per-job records (simulate --jobs)");
  cmd.add_option("--events", f.plot.events, "Per-round records (simulate --events)");
  cmd.add_option("-o,--output", f.plot.out, "The HTML file to write (default: stdout)");
}

int run_plot(Flags& f) {
  const auto& p = f.plot;
  if (p.input.empty() && p.jobs.empty() && p.events.empty()) {
    return sia::ctl::run_plot_command(f.ctl, p.out);
  }
  return sia::app::run_plot(p);
}

void add_keygen_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("name", f.keygen.name, "Key name, a path prefix (NAME.key, NAME.pub)")->required();
  cmd.add_flag("--force", f.keygen.force, "Replace existing key files");
}

int run_keygen(Flags& f) {
  f.keygen.format = f.common.format();
  return sia::channel::run_keygen(f.keygen);
}

void add_stage_flag(CLI::App& cmd, Flags& f) {
  cmd.add_option("--stage", f.stages,
                 "NAME=COMMAND: run stage estimate, solve or place as an external "
                 "program (repeatable)")
      ->allow_extra_args(false);
}

// round and serve: what the controller schedules, and how.
void add_controller_flags(CLI::App& cmd, Flags& f) {
  sia::cli::add_setting_flag(cmd, f.settings, "controller.cluster", "Cluster file");
  sia::cli::add_setting_flag(cmd, f.settings, "controller.policy", "Scheduling policy");
  add_stage_flag(cmd, f);
}

void add_round_flags(CLI::App& cmd, Flags& f) {
  add_controller_flags(cmd, f);
  cmd.add_flag("--dry-run", f.dry_run, "Decide and print the round; change nothing");
}

void add_serve_flags(CLI::App& cmd, Flags& f) {
  add_controller_flags(cmd, f);
  sia::cli::add_setting_flag(cmd, f.settings, "controller.bind",
                             "Endpoint to serve agents and clients on");
  sia::cli::add_setting_flag(cmd, f.settings, "controller.round", "Seconds between rounds");
}

void add_submit_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("file", f.submit.files, "Job files, or - for stdin")->required();
  cmd.add_option("--deadline", f.submit.deadline,
                 "Every job's deadline: a UTC time (2026-12-05T18:00:00Z) or a duration from "
                 "now (90m, 36h, 2d)");
  cmd.add_option("--class", f.submit.job_class,
                 "Every job's class: guaranteed (admitted only if it can meet its deadline) "
                 "or best_effort");
  cmd.add_flag("--or-best-effort", f.submit.or_best_effort,
               "A guaranteed job that cannot meet its deadline is admitted as best-effort "
               "instead of refused");
  cmd.add_flag("--dry-run", f.dry_run, "Validate and print the jobs; submit nothing");
}

// status and history: which jobs.
void add_filter_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("--state", f.filter_states,
                 "Only jobs in these states (queued, running, finished, failed, "
                 "cancelled, stopped, submitted, rejected; comma-separated or repeated)");
  cmd.add_option("--user", f.filter_users,
                 "Only jobs these users submitted (alice, or local:alice / client:alice)");
}

sia::ctl::JobFilter job_filter(const Flags& f) {
  sia::ctl::JobFilter filter;
  filter.states = sia::ctl::parse_state_filter(f.filter_states, "--state");
  filter.users = f.filter_users;
  return filter;
}

void add_status_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.jobs, "Jobs to show (default: all)");
  add_filter_flags(cmd, f);
}

void add_history_flags(CLI::App& cmd, Flags& f) {
  add_filter_flags(cmd, f);
  cmd.add_option("--since", f.since,
                 "Only jobs active since then: seconds since the epoch, a UTC date "
                 "or time (2026-12-01, 2026-12-01T08:00) or a time ago (12h, 7d)");
}

// cancel, hold, release and requeue: requests on named jobs.
template <sia::ctl::JobRequest R>
void add_job_request_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.jobs, "Jobs")->required();
  cmd.add_flag("--dry-run", f.dry_run,
               std::string("Check the jobs; nothing is ") + sia::ctl::past_tense(R));
}

template <sia::ctl::JobRequest R>
int run_job_request(Flags& f) {
  return sia::ctl::run_job_request_command(f.ctl, R, f.jobs);
}

void add_explain_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.explain_job, "The job, or an app (a search: its trials and values)")
      ->required();
}

void add_logs_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("job", f.logs.job, "The job")->required();
  cmd.add_option("--rank", f.logs.rank, "The rank whose log to print")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  cmd.add_option("--tail", f.logs.tail, "Only the last N lines")->check(CLI::Range(0, 1 << 30));
  cmd.add_flag("--follow", f.logs.follow,
               "Keep printing what the rank writes until the job ends (or Ctrl-C)");
}

void add_fsck_flags(CLI::App& cmd, Flags& f) {
  cmd.add_flag("--repair", f.repair,
               "Salvage every intact record; move damaged files aside as FILE.damaged-TIME");
}

void add_slurm_cluster_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("--write", f.write,
                 "Write the description to this file (atomically; nothing on an error) "
                 "instead of stdout");
}

using sia::ctl::JobRequest;
const sia::cli::Subcommand<Flags> kSubcommands[] = {
    {"simulate",
     "Simulate a workload on a cluster with one policy, or several side by side.\n\n"
     "Examples:\n"
     "  sia-ctl simulate\n"
     "  sia-ctl simulate --policy sia,gavel,pollux,themis --workload data/workloads/saturn\n"
     "  sia-ctl simulate --workload jobs.csv --jobs results.jsonl --events rounds.jsonl",
     add_simulate_flags, run_simulate},
    {"plot",
     "Draw a simulation's results, a Series document, or the state directory's kept rounds "
     "as one self-contained HTML page of SVG charts.\n\n"
     "Examples:\n"
     "  sia-ctl simulate -o json --jobs jobs.jsonl --events rounds.jsonl > result.json\n"
     "  sia-ctl plot result.json --jobs jobs.jsonl --events rounds.jsonl -o report.html\n"
     "  sia-ctl plot curve.json -o curve.html\n"
     "  sia-ctl --state-dir /var/lib/sia/ctl plot -o cluster.html",
     add_plot_flags, run_plot},
    {"serve",
     "Run the controller: a round every controller.round seconds, the sia-run agents and "
     "the clients served on the control channel (stops on SIGTERM).\n\n"
     "Examples:\n"
     "  sia-ctl serve --config /etc/sia/config.toml\n"
     "  sia-ctl serve --cluster cluster.toml --bind tcp://127.0.0.1:7400 --round 30\n"
     "  sia-ctl serve --stage solve='sia-solve --policy themis'",
     add_serve_flags, [](Flags& f) { return sia::serve::run_serve_command(f.ctl); }},
    {"round",
     "Run exactly one scheduling round on the state directory and exit (for cron).\n\n"
     "Examples:\n"
     "  sia-ctl round --cluster cluster.toml\n"
     "  sia-ctl round --stage solve='sia-solve --policy themis' -o json\n"
     "  * * * * * sia-ctl round -q    # crontab: exit 75 while another round runs",
     add_round_flags, [](Flags& f) { return sia::ctl::run_round_command(f.ctl); }},
    {"submit",
     "Submit jobs (JobSpec or Jobs files, TOML or JSON); the next round takes them in.\n\n"
     "Examples:\n"
     "  sia-ctl submit job.toml\n"
     "  sia-ctl submit -o json a.toml b.toml",
     add_submit_flags, [](Flags& f) { return sia::ctl::run_submit_command(f.ctl, f.submit); }},
    {"status",
     "Show jobs: state, placement, progress, and why each waiting job waits\n\n"
     "Examples:\n"
     "  sia-ctl status\n"
     "  sia-ctl status --state queued --user alice -o json",
     add_status_flags,
     [](Flags& f) { return sia::ctl::run_status_command(f.ctl, f.jobs, job_filter(f)); }},
    {"history",
     "Accounting (sacct-like): per job submit, start and end, wait, GPU hours per GPU type, "
     "restarts, work lost, final state\n\n"
     "Examples:\n"
     "  sia-ctl history --since 7d\n"
     "  sia-ctl history --user alice --state finished,failed -o csv > jobs.csv",
     add_history_flags,
     [](Flags& f) { return sia::ctl::run_history_command(f.ctl, job_filter(f), f.since); }},
    {"cancel", "Cancel jobs; the next round stops them", add_job_request_flags<JobRequest::cancel>,
     run_job_request<JobRequest::cancel>},
    {"hold",
     "Hold jobs: they are not scheduled until released (the next round stops a running "
     "one with a checkpoint)",
     add_job_request_flags<JobRequest::hold>, run_job_request<JobRequest::hold>},
    {"release", "Release held jobs: they may be scheduled again",
     add_job_request_flags<JobRequest::release>, run_job_request<JobRequest::release>},
    {"requeue",
     "Requeue running jobs: the next round stops them with a checkpoint, and they wait in "
     "the queue like any other",
     add_job_request_flags<JobRequest::requeue>, run_job_request<JobRequest::requeue>},
    {"nodes", "Show the nodes: up or down, their jobs", nullptr,
     [](Flags& f) { return sia::ctl::run_nodes_command(f.ctl); }},
    {"explain",
     "Say why a job runs where it runs, or why it waits (from the last round); of an app, "
     "its search",
     add_explain_flags,
     [](Flags& f) { return sia::ctl::run_explain_command(f.ctl, f.explain_job); }},
    {"logs",
     "Print a rank's log, read on the node that holds it.\n\n"
     "Examples:\n"
     "  sia-ctl logs my-job --tail 50\n"
     "  sia-ctl logs my-job --rank 3 --follow",
     add_logs_flags, [](Flags& f) { return sia::ctl::run_logs_command(f.ctl, f.logs); }},
    {"fsck",
     "Check the state directory (journal, snapshot, inbox, kept rounds) under its lock; "
     "exit 65 when it is damaged, 75 while a controller holds it.\n\n"
     "Examples:\n"
     "  sia-ctl --state-dir /var/lib/sia/ctl fsck\n"
     "  sia-ctl --state-dir /var/lib/sia/ctl fsck --repair -o json",
     add_fsck_flags, [](Flags& f) { return sia::ctl::run_fsck_command(f.ctl, f.repair); }},
    {"slurm-cluster",
     "Describe the cluster from Slurm ([slurm] settings): the partition's nodes that take "
     "jobs, their GPU type (slurm.gres_types) and count, as cluster.toml (-o table) or a "
     "Cluster document with the GPUs usable now (-o json).\n\n"
     "Examples:\n"
     "  sia-ctl slurm-cluster --write /etc/sia/cluster.toml\n"
     "  SIA_SLURM_PARTITION=gpu sia-ctl slurm-cluster -o json",
     add_slurm_cluster_flags,
     [](Flags& f) { return sia::ctl::run_slurm_cluster_command(f.ctl, f.write); }},
    {"config", "Print the effective settings and where each came from", nullptr,
     [](Flags& f) { return sia::ctl::run_config_command(f.ctl); }},
    {"keygen",
     "Write a CURVE key pair: NAME.key (mode 0600) and NAME.pub.\n\n"
     "Examples:\n"
     "  sia-ctl keygen /etc/sia/keys/controller\n"
     "  sia-ctl keygen t4-0 -o json",
     add_keygen_flags, run_keygen},
};

// Before any subcommand: the checks across flags, and the controller's settings from the
// flags (sia-config(5) says which flag sets which key).
void prepare(const CLI::App& app, Flags& f) {
  if (f.common.format() == sia::cli::Format::csv && sia::cli::given_subcommand(app) != "history") {
    throw sia::Error(sia::ExitStatus::usage, "-o csv: only sia-ctl history writes CSV");
  }
  auto& ctl = f.ctl;
  ctl.sources.config_file = f.config_file;
  ctl.format =
      f.common.format() == sia::cli::Format::jsonl ? sia::cli::Format::json : f.common.format();
  ctl.dry_run = f.dry_run;
  ctl.sources.add_flags(f.settings);
  for (const auto& st : f.stages) {
    auto [key, command] = sia::ctl::parse_stage_flag(st);
    ctl.sources.flags[key] = {"--stage", command};
  }
  sia::serve::install_remote_backend();
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = "sia-ctl";
  CLI::App app{
      "Run and inspect the sia scheduler.\n\n"
      "Examples:\n"
      "  sia-ctl simulate                      # bundled cluster and workload\n"
      "  sia-ctl simulate --workload data/workloads/saturn --compat reference -o json\n"
      "  sia-ctl simulate --cluster c.toml --workload jobs.csv --jobs results.jsonl\n"
      "  sia-ctl simulate --policy sia,themis --report report.html\n"
      "  sia-ctl submit job.toml && sia-ctl round --cluster c.toml && sia-ctl status\n"
      "  sia-ctl serve --config /etc/sia/config.toml\n"
      "  sia-ctl --connect tcp://ctl:7400 --server-key ctl.pub --secret-key me.key status\n"
      "  sia-ctl --state-dir /var/lib/sia/ctl explain my-job",
      program};
  Flags flags;
  flags.common.output = "table";
  sia::cli::add_common_flags(app, flags.common, {"table", "json", "jsonl", "csv"});
  app.add_option("--config", flags.config_file,
                 "Configuration file (default $SIA_CONFIG; see sia-config(5))");
  using sia::cli::add_setting_flag;
  add_setting_flag(app, flags.settings, "controller.state_dir", "Controller state directory",
                   "$XDG_STATE_HOME/sia/ctl");
  add_setting_flag(app, flags.settings, "client.connect",
                   "Clients: ask the controller at this endpoint (sia-ctl serve) instead of "
                   "acting on the state directory");
  add_setting_flag(app, flags.settings, "client.server_key",
                   "Clients: the controller's public key file, for CURVE");
  add_setting_flag(app, flags.settings, "client.secret_key",
                   "Clients: this client's key file, mode 0600, for CURVE");
  return sia::cli::run_subcommands(app, argc, argv, flags.common, program, kSubcommands, flags,
                                   prepare);
}
