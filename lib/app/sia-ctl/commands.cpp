#include "app/sia-ctl/commands.hpp"

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "ctl/client_backend.hpp"
#include "ctl/client_render.hpp"
#include "ctl/command_driver.hpp"
#include "ctl/history.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/round_outage.hpp"
#include "ctl/slurm_driver.hpp"
#include "ctl/state_store.hpp"
#include "ctl/submission.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>

namespace sia::ctl {

using nlohmann::json;

namespace {

void print(const json& doc, cli::Format format) {
  if (format == cli::Format::csv) {
    if (doc.value("kind", "") != "JobHistory") {
      throw Error(ExitStatus::usage, "-o csv: only sia-ctl history writes CSV");
    }
    cli::write_stdout(history_csv(doc));
  } else if (format == cli::Format::table) {
    cli::write_stdout(render_table(doc, wall_clock()));
  } else {
    cli::write_stdout(dump_json(doc, cli::stdout_is_tty()) + "\n");
  }
}

void warn(const std::string& w) {
  log::info("warning: " + w);
}

}  // namespace

Settings config_of(const CtlArgs& args) {
  Settings c = load_config(args.sources);
  if (c.controller.state_dir.empty()) {
    throw Error(ExitStatus::config,
                "no state directory: give --state-dir, or set controller.state_dir, "
                "SIA_CTL_STATE_DIR or HOME");
  }
  return c;
}

std::pair<std::string, std::string> parse_stage_flag(const std::string& text) {
  auto eq = text.find('=');
  std::string name = eq == std::string::npos ? text : text.substr(0, eq);
  if (eq == std::string::npos || (name != "estimate" && name != "solve" && name != "place")) {
    throw Error(ExitStatus::usage,
                "--stage: expected estimate=COMMAND, solve=COMMAND or "
                "place=COMMAND, got \"" +
                    text + "\"");
  }
  return {"stages." + name, text.substr(eq + 1)};
}

int run_round_command(const CtlArgs& args) {
  Settings config = config_of(args);
  if (config.controller.cluster.empty()) {
    throw Error(ExitStatus::config,
                "no cluster: give --cluster, or set controller.cluster or SIA_CLUSTER");
  }
  Cluster cluster = read_cluster(config.controller.cluster);
  StateStore store(config.controller.state_dir);
  std::optional<exec::StateLock> lock;
  if (!args.dry_run) {
    store.create();
    lock.emplace(store.lock("sia-ctl round"));
  }
  std::vector<std::string> warnings;
  JobBook book = store.exists() ? store.load(!args.dry_run, &warnings) : JobBook{};
  for (const auto& w : warnings) warn(w);
  // [slurm] enabled: the round goes through Slurm (sbatch, scancel), not the [nodes] commands.
  auto offsets = [&book] { return book.report_offsets(); };
  std::unique_ptr<NodeDriver> driver;
  std::function<std::vector<std::string>()> driver_warnings;
  if (config.slurm.enabled) {
    SlurmDriverOptions so;
    so.state_dir = store.root();
    so.checkpoint_root = config.controller.checkpoint_root;
    auto d = std::make_unique<SlurmDriver>(
        cluster, config.slurm, so, std::make_unique<slurm::ProcessRunner>(config.slurm), offsets);
    driver_warnings = [p = d.get()] { return p->take_warnings(); };
    driver = std::move(d);
  } else {
    auto d = std::make_unique<CommandDriver>(cluster, config.controller.cluster, store.root(),
                                             config.nodes, offsets);
    driver_warnings = [p = d.get()] { return p->take_warnings(); };
    driver = std::move(d);
  }
  RoundOptions options;
  options.dry_run = args.dry_run;
  std::vector<std::string> held;  // said after the round, when it is known whether one
  options.warn = [&held](const std::string& w) { held.push_back(w); };  // outage explains all
  RoundEngine engine(config, cluster, store, *driver, options);
  json data;
  try {
    data = engine.run(book);
  } catch (...) {
    for (const auto& w : held) warn(w);
    throw;
  }
  json doc = {{"apiVersion", kApiVersion},
              {"kind", "RoundResult"},
              {"metadata", {{"generator", "sia-ctl round"}}},
              {"data", data}};
  print(doc, args.format);
  // Every node down for one reason (slurmctld or the network unreachable): that reason,
  // once, instead of a line per node.
  const RoundOutage outage = round_outage(data["nodes"], cluster.nodes.size());
  for (const auto& w : held) {
    if (!said_by(outage, w)) warn(w);
  }
  for (const auto& w : driver_warnings()) warn(w);
  if (outage.outage) {
    cli::write_stderr(log::program() + ": error: " + outage_line(outage) + "\n");
    return to_int(ExitStatus::unavailable);
  }
  return 0;
}

int run_submit_command(const CtlArgs& args, const SubmitFlags& flags) {
  Settings config = config_of(args);
  Catalog catalog(config.controller.catalog.empty() ? default_catalog_dir()
                                                    : config.controller.catalog);
  // With a cluster configured, a job it can never hold is refused here, before the inbox.
  std::optional<Cluster> cluster;
  if (!config.controller.cluster.empty()) cluster = read_cluster(config.controller.cluster);
  Submission submission = read_submissions(flags.files, catalog, cluster ? &*cluster : nullptr,
                                           job_limits(config.controller));
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec);
  if (ec) {  // a deleted directory: nowhere a relative command could run
    throw Error(ExitStatus::no_input,
                "cannot read the working directory (the jobs' workdir): " + ec.message());
  }
  record_workdir(submission, cwd.string());
  stamp_deadlines(submission, wall_clock(), flags.deadline, flags.job_class);
  submission.or_best_effort = flags.or_best_effort;
  const std::vector<JobSpec>& specs = submission.jobs;
  if (args.dry_run) {
    // What the controller would refuse (a name used before, or waiting), nothing written.
    make_client_backend(config)->check_submit(submission);
    json list = json::array();
    for (const auto& s : specs) list.push_back(job_spec_to_json(s));
    json doc = {{"apiVersion", kApiVersion},
                {"kind", "Jobs"},
                {"metadata", {{"generator", "sia-ctl submit"}, {"dry_run", true}}},
                {"data", {{"jobs", list}}}};
    if (args.format == cli::Format::table) {
      std::string out;
      for (const auto& s : specs) out += "would submit " + s.name + "\n";
      for (const auto& a : submission.apps) {
        int trials = 0;
        for (const auto& s : specs) trials += s.app == a.name ? 1 : 0;
        out += "would submit app " + a.name + ": " + std::to_string(trials) + " trials, " +
               to_string(a.scheduler.kind) + "\n";
      }
      cli::write_stdout(out + "dry run: nothing was submitted\n");
    } else {
      print(doc, args.format);
    }
    return 0;
  }
  print(make_client_backend(config)->submit(submission), args.format);
  return 0;
}

int run_status_command(const CtlArgs& args, const std::vector<std::string>& jobs,
                       const JobFilter& filter) {
  Settings config = config_of(args);
  print(filter_jobs(make_client_backend(config)->status(jobs), filter), args.format);
  return 0;
}

int run_history_command(const CtlArgs& args, JobFilter filter, const std::string& since) {
  if (!since.empty()) filter.since = parse_since(since, wall_clock(), "--since");
  Settings config = config_of(args);
  print(filter_jobs(make_client_backend(config)->history(), filter), args.format);
  return 0;
}

int run_job_request_command(const CtlArgs& args, JobRequest request,
                            const std::vector<std::string>& jobs) {
  Settings config = config_of(args);
  auto backend = make_client_backend(config);
  if (args.dry_run) {
    print(backend->status(jobs), args.format);
    if (args.format == cli::Format::table) {
      cli::write_stdout(std::string("dry run: nothing was ") + past_tense(request) + "\n");
    }
    return 0;
  }
  print(backend->request(request, jobs), args.format);
  return 0;
}

int run_nodes_command(const CtlArgs& args) {
  Settings config = config_of(args);
  if (config.slurm.enabled && config.client.connect.empty()) {  // the live nodes, from Slurm
    print(slurm_nodes_document(config), args.format);
    return 0;
  }
  print(make_client_backend(config)->nodes(), args.format);
  return 0;
}

int run_explain_command(const CtlArgs& args, const std::string& job) {
  Settings config = config_of(args);
  print(make_client_backend(config)->explain(job), args.format);
  return 0;
}

int run_config_command(const CtlArgs& args) {
  Settings config = load_config(args.sources);
  if (args.format == cli::Format::table) {
    cli::write_stdout(config_table(config));
  } else {
    print({{"apiVersion", kApiVersion},
           {"kind", "Config"},
           {"metadata", {{"generator", "sia-ctl config"}}},
           {"data", config_to_json(config)}},
          args.format);
  }
  return 0;
}

}  // namespace sia::ctl
