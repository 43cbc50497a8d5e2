#include "ctl/pipe_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "os/run_process.hpp"
#include "os/spawn.hpp"

namespace sia::ctl {

std::string resolve_program(const std::string& program) {
  if (program.empty() || program.find('/') != std::string::npos) return program;
  try {
    std::filesystem::path self(os::self_executable());
    std::filesystem::path beside = self.parent_path() / program;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  } catch (const std::exception&) {
  }
  return program;
}

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t nl = text.rfind('\n', end - 1);
    std::size_t start = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    if (nl == std::string::npos) break;
    end = nl;
  }
  return "";
}

PipedResult run_piped(const std::vector<std::string>& argv, const std::string& input,
                      double timeout, const std::vector<std::pair<std::string, std::string>>& env,
                      std::size_t max_out) {
  if (argv.empty()) throw Error(ExitStatus::software, "run_piped: no program");
  os::SpawnOptions o;
  o.argv = argv;
  o.argv[0] = resolve_program(o.argv[0]);
  o.env = env;
  o.in = o.out = o.err = os::Stream::pipe();
  o.group = os::Group::own;
  o.parent_death_signal = SIGTERM;
  o.default_signals = {SIGPIPE};
  o.blocked_signals = std::vector<int>{};
  os::RunResult run = os::run_process(o, input, timeout, 5, max_out);
  PipedResult r;
  r.timed_out = run.timed_out;
  r.oversized = run.out_overflow;
  r.out = std::move(run.out);
  r.err = std::move(run.err);
  r.seconds = run.seconds;
  r.status = run.exit.status();
  if (run.exec_errno != 0) {
    r.err = o.argv[0] + ": cannot execute\n" + r.err;
    r.status = 127;
  }
  return r;
}

}  // namespace sia::ctl
