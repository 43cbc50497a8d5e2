#include "exec/executor.hpp"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "core/log.hpp"
#include "exec/run_as.hpp"
#include "exec/spawn.hpp"
#include "os/atomic_file.hpp"
#include "os/make_dirs.hpp"
#include "os/safe_open.hpp"
#include "os/spawn.hpp"

namespace sia::exec {

namespace {

constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr double kStartTimeoutSeconds = 30;

void signal_supervisor(const JobStatus& s, int sig) {
  if (is_alive(s.supervisor)) ::kill(s.supervisor.pid, sig);
}

}  // namespace

void Executor::request_stop(const JobRecord& r, const std::string& reason, double grace,
                            bool force) {
  if (!r.live()) return;
  if (r.status.state == RunState::stopping && !force) return;
  state_.write_stop(r.job, StopRequest{r.launch->generation, grace, reason});
  signal_supervisor(r.status, SIGTERM);
}

void Executor::stop(const std::vector<std::pair<std::string, std::string>>& jobs, double grace) {
  std::vector<std::string> names;
  for (const auto& [job, reason] : jobs) {
    JobRecord r = state_.record(job);
    if (!r.live()) continue;
    log::debug("stopping " + job + " (round " + std::to_string(r.launch->generation) +
               "): " + reason);
    request_stop(r, reason, grace, false);
    names.push_back(job);
  }
  wait_ended(names, grace);
}

void Executor::wait_stopping() {
  std::vector<std::string> names;
  double grace = 0;
  for (const auto& r : state_.records()) {
    if (r.live() && r.status.state == RunState::stopping) {
      names.push_back(r.job);
      grace = std::max(grace, r.launch->grace);
    }
  }
  wait_ended(names, grace);
}

void Executor::wait_ended(const std::vector<std::string>& jobs, double grace) {
  if (jobs.empty()) return;
  auto deadline = clock_.now() + os::span(grace + kKillMarginSeconds);
  bool killed = false;
  for (;;) {
    std::vector<JobRecord> live;
    for (const auto& j : jobs) {
      JobRecord r = state_.record(j);
      if (r.live()) live.push_back(std::move(r));
    }
    if (live.empty()) return;
    if (clock_.now() >= deadline) {
      if (killed) {
        throw Error(ExitStatus::temp_fail,
                    "job \"" + live.front().job + "\" did not stop, even after SIGKILL");
      }
      for (const auto& r : live) {
        log::info("job " + r.job + " did not stop in time: killing it");
        if (is_alive(r.status.supervisor)) {
          if (r.status.group > 0) ::killpg(r.status.group, SIGKILL);
          ::kill(r.status.supervisor.pid, SIGKILL);
        }
      }
      killed = true;
      deadline = clock_.now() + os::span(kKillMarginSeconds);
    }
    clock_.sleep_for(kPoll);
  }
}

pid_t Executor::start(const JobLaunch& launch, bool detached) {
  std::error_code ec;
  if (!launch.ckpt_dir.empty()) os::make_dirs(launch.ckpt_dir, os::kPrivateDir, os::kTraverseDir);
  state_.set_held(launch.job, false);
  std::filesystem::remove(state_.batch_plan_path(launch.job), ec);  // the last generation's
  state_.write_launch(launch);
  if (!launch.report.empty()) {  // SIA_REPORT exists from the start
    os::open_file(launch.report, os::Access::append, true, os::kPrivateFile);
  }
  give_job_files(launch, state_.job_dir(launch.job) + "/logs");
  std::vector<std::string> argv = {os::self_executable(),
                                   "supervise",
                                   "--state-dir",
                                   state_.root(),
                                   "--generation",
                                   std::to_string(launch.generation),
                                   launch.job};
  pid_t pid = spawn_helper(argv, state_.supervisor_log(launch.job), detached);
  auto deadline = clock_.now() + os::span(kStartTimeoutSeconds);
  for (;;) {
    auto s = state_.read_status(launch.job);
    if (s && s->generation == launch.generation) {
      if (s->state == RunState::failed) {
        log::info("job " + launch.job + " failed at once: " + s->reason);
      }
      return pid;
    }
    if (clock_.now() >= deadline || !is_alive(identify(pid))) {
      s = state_.read_status(launch.job);
      if (s && s->generation == launch.generation) return pid;
      throw Error(ExitStatus::unavailable, "job \"" + launch.job +
                                               "\": its supervisor did not start (see " +
                                               state_.supervisor_log(launch.job) + ")");
    }
    clock_.sleep_for(kPoll);
  }
}

void Executor::resize(const JobRecord& record, const JobLaunch& wanted) {
  if (!record.launch) return;
  JobLaunch l = *record.launch;
  l.batch = wanted.batch;  // as the placement says, so that it compares equal
  // The batch the workers will train, what a start's workers make of SIA_BATCH_SIZE too:
  // the plan holds the invariant (batch_size an integer, "96").
  const BatchSetting trained = batch_of(l.batch.local, l.world_size(), l.batch.accum_steps);
  if (l.batch_plan.empty()) l.batch_plan = state_.batch_plan_path(l.job);
  // Numbered past any plan already written to this round (a crash may have left one that
  // launch.json does not know), so that the workers take it.
  int written = 0;
  {
    // Read without following a link (the job's user could not plant one here, but the rule
    // costs nothing); a plan is small.
    std::string text;
    try {
      if (os::Fd in = os::open_file(l.batch_plan, os::Access::read)) {
        text = os::read_at(in.get(), 0, 1 << 20);
      }
    } catch (const Error&) {
    }
    const auto j = parse_json_bounded(text);
    if (j.is_object() && j.value("round", -1) == l.generation && j.contains("plan") &&
        j["plan"].is_number_integer()) {
      written = j["plan"].get<int>();
    }
  }
  l.plan = std::max(l.plan, written) + 1;
  const nlohmann::json plan = {{"type", "batch_plan"},
                               {"job", l.job},
                               {"round", l.generation},
                               {"plan", l.plan},
                               {"batch_size", trained.global},
                               {"local_bsz", trained.local},
                               {"accum_steps", trained.accum_steps}};
  // The job's account reads it (0600, its own), whatever the umask.
  std::optional<os::Account> account;
  try {
    account = job_account(l.run_as, l.node);
  } catch (const Error&) {
  }
  os::write_file_atomic(l.batch_plan, plan.dump() + "\n", os::kPrivateFile,
                        account ? &*account : nullptr);
  state_.write_launch(l);
  log::debug("job " + l.job + " round " + std::to_string(l.generation) + ": batch plan " +
             std::to_string(l.plan) + " (batch " + std::to_string(trained.global) + ", local " +
             std::to_string(trained.local) + " x " + std::to_string(trained.micro_steps()) + ")");
}

}  // namespace sia::exec
