#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "slurm/beside_runner.hpp"

using namespace sia::slurm;

namespace {

// Takes its time (a slurmctld that does not answer), then answers or throws; says on
// which thread it ran.
class SlowRunner : public CommandRunner {
 public:
  std::thread::id ran_on;
  bool fail = false;
  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override {
    ran_on = std::this_thread::get_id();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    if (fail) throw std::runtime_error("no runner");
    CommandResult r;
    r.ran = true;
    r.status = static_cast<int>(timeout_s);
    r.out = argv.at(0);
    return r;
  }
  // As a user: the same, its first word marked with the user's name.
  CommandResult run_as(const sia::os::Account& user, const std::vector<std::string>& argv,
                       double timeout_s) override {
    CommandResult r = run(argv, timeout_s);
    r.out = user.name + ":" + r.out;
    return r;
  }
};

}  // namespace

TEST_CASE("a command runs beside while the caller keeps doing its work", "[beside_runner]") {
  auto inner = std::make_unique<SlowRunner>();
  SlowRunner* slow = inner.get();
  int turns = 0;
  BesideRunner runner(std::move(inner), [&turns] {
    ++turns;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  SECTION("its result comes back whole") {
    CommandResult r = runner.run({"scontrol", "ping"}, 7);
    CHECK(r.ran);
    CHECK(r.status == 7);
    CHECK(r.out == "scontrol");
    CHECK(turns >= 3);  // the caller was not blocked the while
    CHECK(slow->ran_on != std::this_thread::get_id());
  }
  SECTION("a command as a user runs beside too") {
    sia::os::Account user;
    user.name = "alice";
    CommandResult r = runner.run_as(user, {"scancel", "17"}, 5);
    CHECK(r.out == "alice:scancel");
    CHECK(turns >= 3);
    CHECK(slow->ran_on != std::this_thread::get_id());
  }
  SECTION("an exception of the command reaches the caller") {
    slow->fail = true;
    CHECK_THROWS_WITH(runner.run({"sbatch"}, 1), "no runner");
  }
}
