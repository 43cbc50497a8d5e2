#include "slurm/command_runner.hpp"

#include "core/error.hpp"
#include "os/run_process.hpp"

namespace sia::slurm {

namespace {
// Output of one Slurm query: a node or job list of a large site fits many times over.
constexpr std::size_t kMaxOutput = 64u << 20;

std::string first_line(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}
}  // namespace

ProcessRunner::ProcessRunner(const SlurmSettings& settings)
    : conf_(settings.slurm_conf), bin_dir_(settings.bin_dir) {}

CommandResult ProcessRunner::run(const std::vector<std::string>& argv, double timeout_s) {
  os::SpawnOptions o;
  o.argv = argv;
  return run_with(std::move(o), timeout_s);
}

CommandResult ProcessRunner::run_as(const os::Account& user, const std::vector<std::string>& argv,
                                    double timeout_s) {
  os::SpawnOptions o;
  o.argv = argv;
  o.account = user;
  o.cwd = "/";
  return run_with(std::move(o), timeout_s);
}

CommandResult ProcessRunner::run_with(os::SpawnOptions o, double timeout_s) {
  const std::vector<std::string> argv = o.argv;
  if (!bin_dir_.empty() && !argv.empty()) {
    o.argv[0] = bin_dir_ + "/" + argv[0];
    o.search_path = false;
  }
  if (!conf_.empty()) o.env.push_back({"SLURM_CONF", conf_});
  o.out = os::Stream::pipe();
  o.err = os::Stream::pipe();
  CommandResult r;
  try {
    os::RunResult run = os::run_process(o, "", timeout_s, 2, kMaxOutput);
    r.out = std::move(run.out);
    r.err = std::move(run.err);
    if (run.exec_errno != 0) {
      r.err = "cannot run " + o.argv[0] + ": " + run.exec_error;
    } else if (run.timed_out) {
      r.err = "no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s";
    } else if (run.out_overflow) {
      r.err = "more than " + std::to_string(kMaxOutput) + " bytes of output";
    } else {
      r.ran = true;
      r.status = run.exit.status();
    }
  } catch (const Error& e) {
    r.err = e.what();
  }
  return r;
}

std::string run_or_throw(CommandRunner& runner, const std::vector<std::string>& argv,
                         double timeout_s) {
  CommandResult r = runner.run(argv, timeout_s);
  if (r.ran && r.status == 0) return r.out;
  std::string why = r.err.empty() ? "exit status " + std::to_string(r.status) : first_line(r.err);
  throw Error(ExitStatus::unavailable, "slurm: slurmctld not reachable (" +
                                           (argv.empty() ? std::string() : argv[0]) + ": " + why +
                                           ")");
}

}  // namespace sia::slurm
