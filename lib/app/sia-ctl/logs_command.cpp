// sia-ctl logs (commands.hpp).
#include <chrono>
#include <thread>

#include "app/sia-ctl/commands.hpp"
#include "cli/stop_signals.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "ctl/client_backend.hpp"
#include "ctl/job_log.hpp"

namespace sia::ctl {

namespace {
constexpr auto kFollowPoll = std::chrono::milliseconds(500);

bool stopped() {
  return cli::stop_signals().load() > 0;
}
}  // namespace

int run_logs_command(const CtlArgs& args, const LogsRequest& request) {
  if (request.follow && args.format != cli::Format::table) {
    throw Error(ExitStatus::usage, "--follow prints the log as text: not with -o json");
  }
  Settings config = load_config(args.sources);
  auto backend = make_client_backend(config);
  LogQuery q{request.job, request.rank, request.tail, 0};
  if (args.format != cli::Format::table) {
    cli::write_stdout(dump_json(backend->logs(q), cli::stdout_is_tty()) + "\n");
    return 0;
  }
  if (request.follow) cli::install_counting_stop_handlers();
  std::string node;
  bool ended_seen = false;
  for (;;) {
    nlohmann::json d;
    try {
      d = backend->logs(q)["data"];
    } catch (const Error& e) {
      // A stop signal that lands inside a request ends the following as one between them.
      if (request.follow && stopped()) return 0;
      // Following a job that has been read from: its rank may be moving to another node
      // (no log there yet, 66) or its node may be away for a while (69). Wait for it.
      const bool transient =
          e.status() == ExitStatus::no_input || e.status() == ExitStatus::unavailable;
      if (!request.follow || node.empty() || !transient) throw;
      std::this_thread::sleep_for(kFollowPoll);
      if (stopped()) return 0;
      continue;
    }
    if (!node.empty() && d.value("node", node) != node && q.tail < 0 && q.offset > 0) {
      q.offset = 0;  // the rank moved to another node: its log there from the start
      node = d.value("node", node);
      continue;
    }
    if (node.empty() && d.contains("note") && d["note"].is_string()) {
      cli::write_stderr("note: " + d["note"].get<std::string>() + "\n");  // once
    }
    node = d.value("node", node);
    cli::write_stdout(d.value("text", std::string()));
    q.tail = -1;
    q.offset = d.value("next", std::int64_t{0});
    if (q.offset < d.value("size", std::int64_t{0})) continue;  // more than one read holds
    if (!request.follow || stopped()) return 0;
    if (ranks_ended(d)) {
      if (ended_seen) return 0;  // one read after the end took what it wrote last
      ended_seen = true;
      continue;
    }
    std::this_thread::sleep_for(kFollowPoll);
    if (stopped()) return 0;
  }
}

}  // namespace sia::ctl
