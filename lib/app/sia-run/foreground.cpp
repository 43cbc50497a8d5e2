// sia-run run (commands.hpp): apply in the foreground, then wait for the node's jobs and
// exit with their status like srun. The job supervisors are children of this process
// (they stop their jobs gracefully if it dies); a first SIGINT, SIGTERM or SIGHUP asks
// every job to checkpoint and stop, a second one kills them.
#include <signal.h>
#include <sys/wait.h>

#include "app/sia-run/commands.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "exec/node_apply.hpp"
#include "exec/run_documents.hpp"

namespace sia::exec {

namespace {

// Blocks the signals the wait loop takes with sigtimedwait, for the life of the object.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set_, s);
    ::sigprocmask(SIG_BLOCK, &set_, &old_);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &dfl, &old_chld_);
  }
  ~BlockedSignals() {
    ::sigaction(SIGCHLD, &old_chld_, nullptr);
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  // The next blocked signal within `ms`, or 0.
  int next(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000};
    int sig = ::sigtimedwait(&set_, nullptr, &ts);
    return sig < 0 ? 0 : sig;
  }

 private:
  sigset_t set_, old_;
  struct sigaction old_chld_;
};

void reap_children() {
  int st;
  while (::waitpid(-1, &st, WNOHANG) > 0) {
  }
}

}  // namespace

int run_foreground(const ApplyArgs& args) {
  NodeWork work = read_node_work(args);
  StateDir state(args.state_dir.empty() ? default_state_dir() : args.state_dir);
  if (args.dry_run) {
    print_plan(work.node, state, true, plan_node_actions(work, state, Mode::run), args.format);
    return 0;
  }
  BlockedSignals signals;  // a ^C while starting is taken by the wait loop below
  os::Clock& clock = os::system_clock();
  Executor executor(state, clock);
  std::vector<PlannedAction> actions;
  {
    StateLock lock = state.lock();
    actions = apply_node(work, state, executor, Mode::run, false);
  }
  for (const auto& a : actions) {
    log::debug(a.job + ": " + to_string(a.action) + " (round " + std::to_string(a.generation) +
               "): " + a.reason);
  }

  int interrupts = 0;
  std::vector<JobRecord> records;
  for (;;) {
    reap_children();
    records.clear();
    bool live = false;
    for (const auto& w : work.wanted) {
      records.push_back(state.record(w.job));
      live = live || records.back().live();
    }
    if (!live) break;
    int sig = signals.next(100);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      ++interrupts;
      std::string why = std::string("sia-run run interrupted by ") + (sig == SIGINT    ? "SIGINT"
                                                                      : sig == SIGTERM ? "SIGTERM"
                                                                                       : "SIGHUP");
      log::info(interrupts == 1 ? "stopping the jobs (" + why + "); again to kill them"
                                : "killing the jobs");
      for (const auto& r : records) {
        executor.request_stop(r, why, work.settings.grace, interrupts > 1);
      }
    }
  }
  reap_children();
  print_status(work.node, state, records, args.format);
  std::vector<ProcessExit> exits;
  for (const auto& r : records) {
    if (auto e = r.status.exit()) exits.push_back(*e);
  }
  auto all = combine_exits(exits);
  return all ? all->status() : 0;
}

}  // namespace sia::exec
