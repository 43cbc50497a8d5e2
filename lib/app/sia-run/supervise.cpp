// sia-run supervise (commands.hpp): the per-job supervisor that apply and run start. It
// reads the generation's launch.json, runs the ranks through a LocalLauncher and records
// every change of the job's status in status.json.
#include <unistd.h>

#include "app/sia-run/commands.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "exec/local_launcher.hpp"
#include "exec/supervisor.hpp"
#include "os/checkpoint_dir.hpp"

namespace sia::exec {

int run_supervise(const SuperviseArgs& args) {
  StateDir state(args.state_dir);
  auto launch = state.read_launch(args.job);
  if (!launch || launch->generation != args.generation) {
    throw Error(ExitStatus::data, "job \"" + args.job + "\": no launch record of round " +
                                      std::to_string(args.generation) + " in " + state.root());
  }
  if (::chdir("/") != 0) {
    // only so the supervisor holds no directory busy; the ranks get their own
  }
  LocalLauncher launcher;
  os::Clock& clock = os::system_clock();
  SupervisorConfig config{args.job, args.generation, rank_commands(*launch),
                          os::span(launch->grace), identify_self()};
  Supervisor supervisor(
      launcher, clock, std::move(config), [&](const JobStatus& s) { state.write_status(s); },
      [&] { return state.read_stop(args.job); });
  const JobStatus end = supervisor.run();
  if (end.state == RunState::finished && !launch->ckpt_dir.empty()) {
    // So that no node sharing the directory starts the job again.
    try {
      os::mark_checkpoint_finished(launch->ckpt_dir, args.generation);
    } catch (const Error& e) {
      log::info("job " + args.job + ": " + e.what());
    }
  }
  return 0;
}

}  // namespace sia::exec
