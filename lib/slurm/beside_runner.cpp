#include "slurm/beside_runner.hpp"

#include <atomic>
#include <exception>
#include <thread>

namespace sia::slurm {

BesideRunner::BesideRunner(std::unique_ptr<CommandRunner> inner, std::function<void()> meanwhile)
    : inner_(std::move(inner)), meanwhile_(std::move(meanwhile)) {}

CommandResult BesideRunner::run(const std::vector<std::string>& argv, double timeout_s) {
  return beside([&] { return inner_->run(argv, timeout_s); });
}

CommandResult BesideRunner::run_as(const os::Account& user, const std::vector<std::string>& argv,
                                   double timeout_s) {
  return beside([&] { return inner_->run_as(user, argv, timeout_s); });
}

// `command` on a thread of its own; `meanwhile` on this one until it returned.
CommandResult BesideRunner::beside(const std::function<CommandResult()>& command) {
  std::atomic<bool> done{false};
  CommandResult result;
  std::exception_ptr error;
  std::thread t([&] {
    try {
      result = command();
    } catch (...) {
      error = std::current_exception();
    }
    done = true;
  });
  try {
    while (!done.load()) meanwhile_();
  } catch (...) {
    t.join();
    throw;
  }
  t.join();
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace sia::slurm
