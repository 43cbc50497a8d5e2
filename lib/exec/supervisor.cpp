#include "exec/supervisor.hpp"

#include <csignal>

#include "exec/job_launch.hpp"
#include "exec/node_plan.hpp"

namespace sia::exec {

static const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
  }
  return "a signal";
}

// A rank that ended of a failure of its own: not success, not preempted (75), not a peer
// lost (69), and not the stop signal the supervisor sent (directly, or as a shell reports
// it: 128 + the signal) once it is stopping.
static bool failed_by_itself(const ProcessExit& e, bool stopping) {
  if (e.success()) return false;
  const bool our_signal = [&] {
    for (int sig : {SIGTERM, SIGKILL}) {
      if (e.signal == sig || (e.signal == 0 && e.code == 128 + sig)) return true;
    }
    return false;
  }();
  if (stopping && our_signal) return false;
  return e.signal != 0 || (e.code != kPreemptedExit && e.code != kPeerLostExit);
}

Supervisor::Supervisor(Launcher& launcher, os::Clock& clock, SupervisorConfig config,
                       Recorder record, StopLookup stop_request)
    : launcher_(launcher),
      clock_(clock),
      config_(std::move(config)),
      record_(std::move(record)),
      stop_request_(std::move(stop_request)) {
  status_.job = config_.job;
  status_.generation = config_.generation;
  status_.supervisor = config_.self;
  for (const auto& c : config_.ranks) status_.ranks.push_back(RankStatus{c.rank, -1, {}, false});
}

RankStatus* Supervisor::rank_of(pid_t pid) {
  for (auto& r : status_.ranks) {
    if (r.pid == pid) return &r;
  }
  return nullptr;
}

void Supervisor::begin_stop(const std::string& why, os::Clock::Duration grace) {
  stopping_ = true;
  stop_reason_ = why;
  deadline_ = clock_.now() + grace;
  launcher_.signal_all(SIGTERM);
  status_.state = RunState::stopping;
  status_.reason = why;
  record_(status_);
}

void Supervisor::kill_now(const std::string& why) {
  killed_ = true;
  kill_reason_ = why;
  launcher_.signal_all(SIGKILL);
}

JobStatus Supervisor::run() {
  for (std::size_t i = 0; i < config_.ranks.size(); ++i) {
    StartResult r = launcher_.start(config_.ranks[i]);
    status_.ranks[i].pid = r.pid;
    std::string who = "rank " + std::to_string(config_.ranks[i].rank);
    if (!r.error.empty()) {
      failure_ = who + ": " + r.error;
      failed_at_start_ = r.pid;
      own_failure_ = true;
      status_.failed_rank = config_.ranks[i].rank;
      if (r.pid < 0) status_.ranks[i].exit = ProcessExit::exited(127);
      break;
    }
  }
  status_.group = launcher_.group();
  status_.state = RunState::running;
  status_.reason = "started";
  record_(status_);
  if (!failure_.empty()) begin_stop(failure_, config_.grace);

  auto running = [&] {
    for (const auto& r : status_.ranks) {
      if (r.pid > 0 && !r.exit) return true;
    }
    return false;
  };
  while (running()) {
    std::optional<std::chrono::milliseconds> timeout;
    if (stopping_ && !killed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - clock_.now());
      timeout = std::max(left, std::chrono::milliseconds(0));
    }
    WaitEvent ev = launcher_.wait(timeout);
    if (ev.kind == WaitEvent::Kind::exited) {
      RankStatus* r = rank_of(ev.pid);
      if (!r || r->exit) continue;
      r->exit = ev.exit;
      r->stopped = stopping_ && r->pid != failed_at_start_;
      const std::string who = "rank " + std::to_string(r->rank);
      // A failure of its own counts also while the others are being stopped for a peer
      // that lost it (failure_ set): it is what that peer lost. During a stop for any other
      // reason the rank was asked to stop, as before.
      if (!own_failure_ && failed_by_itself(ev.exit, stopping_) &&
          (!stopping_ || !failure_.empty())) {
        own_failure_ = true;
        r->stopped = false;
        status_.failed_rank = r->rank;
        failure_ =
            who + " failed: " + ev.exit.describe() + (lost_peer_.empty() ? "" : "; " + lost_peer_);
        if (!stopping_) {
          begin_stop(failure_, config_.grace);
        } else {
          status_.reason = failure_;
          record_(status_);
        }
      } else if (!stopping_ && !ev.exit.success()) {
        if (ev.exit.signal == 0 && ev.exit.code == kPreemptedExit) {
          begin_stop(who + " exited 75 (preempted itself)", config_.grace);
        } else {
          // A lost peer (69): blamed until the rank it lost fails by itself.
          lost_peer_ = who + " lost a peer (" + ev.exit.describe() + ")";
          failure_ = who + " failed: " + ev.exit.describe() + " (a peer was lost)";
          status_.failed_rank = r->rank;
          begin_stop(failure_, config_.grace);
        }
      } else {
        record_(status_);
      }
    } else if (ev.kind == WaitEvent::Kind::interrupted) {
      if (!stopping_) {
        auto req = stop_request_ ? stop_request_() : std::nullopt;
        bool ours = req && req->generation == config_.generation;
        std::string why = ours && !req->reason.empty()
                              ? req->reason
                              : std::string("stop requested (") + signal_name(ev.signal) + ")";
        begin_stop(why, ours ? os::span(req->grace) : config_.grace);
      } else if (!killed_) {
        kill_now("killed on a second stop request");
      }
    } else if (stopping_ && !killed_ && clock_.now() >= deadline_) {
      kill_now("still running when the grace period ended: killed");
    }
  }
  launcher_.signal_all(SIGKILL);  // whatever the ranks left behind in their group
  conclude();
  record_(status_);
  return status_;
}

void Supervisor::conclude() {
  bool all_ok = true, any_signal = false;
  std::string signalled;
  for (const auto& r : status_.ranks) {
    if (!r.exit) continue;
    all_ok = all_ok && r.exit->success();
    if (r.exit->signal && !any_signal) {
      any_signal = true;
      signalled = "rank " + std::to_string(r.rank) + " ended by " + r.exit->describe();
    }
  }
  if (!failure_.empty()) {
    status_.state = RunState::failed;
    status_.reason = failure_;
  } else if (killed_) {
    status_.state = RunState::killed;
    status_.reason = stop_reason_ + "; " + kill_reason_;
  } else if (all_ok) {
    status_.state = RunState::finished;
    status_.reason = "every rank exited 0";
  } else if (any_signal) {
    status_.state = RunState::killed;
    status_.reason = stop_reason_ + "; " + signalled;
  } else {
    status_.state = RunState::preempted;
    status_.reason = stop_reason_;
  }
}

std::vector<RankCommand> rank_commands(const JobLaunch& l) {
  std::vector<RankCommand> out;
  for (const auto& r : l.ranks) {
    RankCommand c;
    c.rank = r.rank;
    c.argv = l.command;
    c.env = r.env;
    c.cwd = l.cwd;
    c.log = r.log;
    c.header = rank_header(l, r);
    c.run_as = l.run_as;
    c.node = l.node;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace sia::exec
