// sia-run logs (commands.hpp).
#include <chrono>
#include <thread>

#include "app/sia-run/commands.hpp"
#include "cli/stop_signals.hpp"
#include "core/error.hpp"

namespace sia::exec {

namespace {
constexpr auto kFollowPoll = std::chrono::milliseconds(250);
}

int run_logs(const LogsArgs& args) {
  if (args.follow && args.document) {
    throw Error(ExitStatus::usage, "--follow prints the log as text: not with -o json");
  }
  StateDir state(args.state_dir.empty() ? default_state_dir() : args.state_dir);
  if (args.document) {
    cli::print_document("RunLog", nlohmann::json{{"generator", "sia-run"}},
                        rank_log_data(state, args.request));
    return 0;
  }
  if (args.follow) cli::install_counting_stop_handlers();
  LogRequest r = args.request;
  for (;;) {
    nlohmann::json d = rank_log_data(state, r);
    cli::write_stdout(d["text"].get<std::string>());
    r.tail = -1;
    r.offset = d["next"].get<std::int64_t>();
    if (r.offset < d["size"].get<std::int64_t>()) continue;  // more than one read holds
    if (!args.follow || cli::stop_signals().load() > 0) return 0;
    if (!d["live"].get<bool>()) {
      // It ended: what it wrote before it did is read above or on this last pass.
      nlohmann::json last = rank_log_data(state, r);
      cli::write_stdout(last["text"].get<std::string>());
      if (last["next"].get<std::int64_t>() >= last["size"].get<std::int64_t>()) return 0;
      r.offset = last["next"].get<std::int64_t>();
      continue;
    }
    std::this_thread::sleep_for(kFollowPoll);
    if (cli::stop_signals().load() > 0) return 0;
  }
}

}  // namespace sia::exec
