// Test doubles for lib/exec: a clock that moves only when told, and a launcher whose
// ranks follow a script (end on their own at a time, answer SIGTERM after a delay with a
// status, ignore it, or die of it). Time passes only inside FakeLauncher::wait().
#pragma once

#include <algorithm>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/launcher.hpp"
#include "os/clock.hpp"

namespace sia::exec::test {

class FakeClock final : public sia::os::Clock {
 public:
  TimePoint now() const override { return now_; }
  void sleep_for(Duration d) override { now_ += d; }
  void advance_to(TimePoint t) { now_ = std::max(now_, t); }
  double elapsed() const {  // seconds since the start
    return std::chrono::duration<double>(now_ - TimePoint{}).count();
  }

 private:
  TimePoint now_{};
};

struct FakeRank {
  std::optional<double> ends_after;  // seconds after start: it ends on its own
  ProcessExit ends_with = ProcessExit::exited(0);
  enum class OnTerm { exit, ignore, die } on_term = OnTerm::exit;
  int term_status = 75;     // OnTerm::exit: its exit code
  double term_delay = 0.5;  // seconds it takes to checkpoint
  bool exec_fails = false;
};

class FakeLauncher final : public Launcher {
 public:
  FakeLauncher(FakeClock& clock, std::vector<FakeRank> ranks)
      : clock_(clock), script_(std::move(ranks)) {}

  // A termination signal delivered to the supervisor `after` seconds from the start.
  void interrupt_at(double after, int sig = SIGTERM) { interrupts_.push_back({after, sig}); }

  StartResult start(const RankCommand& c) override {
    std::size_t i = live_.size();
    Live l;
    l.pid = 100 + static_cast<pid_t>(i);
    const FakeRank& s = script_.at(i);
    if (s.exec_fails) {
      l.end = clock_.elapsed();
      l.exit = ProcessExit::exited(127);
    } else if (s.ends_after) {
      l.end = clock_.elapsed() + *s.ends_after;
      l.exit = s.ends_with;
    }
    live_.push_back(l);
    if (group_ == 0) group_ = l.pid;
    events.push_back("start " + std::to_string(c.rank));
    StartResult r;
    r.pid = l.pid;
    if (s.exec_fails) r.error = "cannot execute '" + c.argv.at(0) + "': No such file or directory";
    return r;
  }

  void signal_all(int sig) override {
    events.push_back("signal " + std::to_string(sig) + " at " + fmt(clock_.elapsed()));
    for (std::size_t i = 0; i < live_.size(); ++i) {
      Live& l = live_[i];
      if (l.reaped) continue;
      const FakeRank& s = script_[i];
      double now = clock_.elapsed();
      if (sig == SIGKILL) {
        if (!l.end || *l.end > now) {
          l.end = now;
          l.exit = ProcessExit::killed(SIGKILL);
        }
      } else if (sig == SIGTERM && s.on_term != FakeRank::OnTerm::ignore) {
        double t = s.on_term == FakeRank::OnTerm::die ? now : now + s.term_delay;
        if (!l.end || *l.end > t) {
          l.end = t;
          l.exit = s.on_term == FakeRank::OnTerm::die ? ProcessExit::killed(SIGTERM)
                                                      : ProcessExit::exited(s.term_status);
        }
      }
    }
  }

  WaitEvent wait(std::optional<std::chrono::milliseconds> timeout) override {
    double now = clock_.elapsed();
    double limit = timeout ? now + std::chrono::duration<double>(*timeout).count() : 1e18;
    // The earliest pending thing: a rank ending or an interrupt.
    int best_rank = -1;
    double best = 1e18;
    for (std::size_t i = 0; i < live_.size(); ++i) {
      if (!live_[i].reaped && live_[i].end && *live_[i].end < best) {
        best = *live_[i].end;
        best_rank = static_cast<int>(i);
      }
    }
    int best_interrupt = -1;
    for (std::size_t k = 0; k < interrupts_.size(); ++k) {
      if (interrupts_[k].first < best) {
        best = interrupts_[k].first;
        best_interrupt = static_cast<int>(k);
      }
    }
    if (best > limit) {
      if (!timeout) throw std::logic_error("FakeLauncher: waiting forever");
      clock_.advance_to(sia::os::Clock::TimePoint{} + sia::os::span(limit));
      return WaitEvent{};
    }
    clock_.advance_to(sia::os::Clock::TimePoint{} + sia::os::span(best));
    WaitEvent ev;
    if (best_interrupt >= 0) {
      ev.kind = WaitEvent::Kind::interrupted;
      ev.signal = interrupts_[static_cast<std::size_t>(best_interrupt)].second;
      interrupts_.erase(interrupts_.begin() + best_interrupt);
      return ev;
    }
    Live& l = live_[static_cast<std::size_t>(best_rank)];
    l.reaped = true;
    ev.kind = WaitEvent::Kind::exited;
    ev.pid = l.pid;
    ev.exit = l.exit;
    return ev;
  }

  pid_t group() const override { return group_; }

  std::vector<std::string> events;

  static std::string fmt(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", s);
    return buf;
  }

 private:
  struct Live {
    pid_t pid = 0;
    std::optional<double> end;
    ProcessExit exit;
    bool reaped = false;
  };
  FakeClock& clock_;
  std::vector<FakeRank> script_;
  std::vector<Live> live_;
  std::vector<std::pair<double, int>> interrupts_;
  pid_t group_ = 0;
};

}  // namespace sia::exec::test
