// Whom a job runs as on this node (exec/run_as.hpp): the rule, for root and for others.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "exec/local_launcher.hpp"
#include "exec/run_as.hpp"
#include "temp_dir.hpp"

using namespace sia::exec;
using sia::RunAs;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

namespace {

// The message job_account() refuses `r` with (status 77), or "" when it takes it.
std::string refusal(const RunAs& r) {
  try {
    job_account(r, "t4-0");
  } catch (const sia::Error& e) {
    CHECK(sia::to_int(e.status()) == 77);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a job runs as its user, never as root for a non-admin without one", "[run_as]") {
  CHECK_FALSE(job_account(std::nullopt, "t4-0"));  // no run_as: sia-run's own user
  CHECK(refusal({"sia-no-such-account-x", "client:alice", false}) ==
        "node t4-0: account sia-no-such-account-x does not exist");
  const sia::os::Account self = sia::os::current_account();
  CHECK_FALSE(job_account(RunAs{"", "client:ops", true}, "t4-0"));  // an admin: as we are
  if (::geteuid() == 0) {
    CHECK(refusal({"", "client:bob", false}) ==
          "node t4-0: client:bob has no user in the allow-list and is no admin; its jobs do "
          "not run as root");
    CHECK(refusal({"root", "client:bob", false}) ==
          "node t4-0: client:bob may not run jobs as root (root): only an admin may");
    CHECK(job_account(RunAs{"root", "client:ops", true}, "t4-0")->uid == 0);
    auto nobody = job_account(RunAs{"nobody", "client:alice", false}, "t4-0");
    REQUIRE(nobody);
    CHECK(nobody->name == "nobody");
  } else {
    CHECK_FALSE(job_account(RunAs{"", "client:bob", false}, "t4-0"));  // as we are: not root
    CHECK(job_account(RunAs{self.name, "client:me", false}, "t4-0")->uid == self.uid);
    CHECK(refusal({"root", "client:ops", true}) ==
          "node t4-0: cannot run the job as root: sia-run runs as " + self.name + ", not root");
  }
}

TEST_CASE("a rank whose account is refused is not started and its log says why", "[run_as]") {
  TempDir tmp;
  LocalLauncher l;
  RankCommand c;
  c.rank = 0;
  c.argv = {"/bin/sh", "-c", "touch " + tmp / "ran"};
  c.log = tmp / "logs/r0.log";
  c.run_as = RunAs{"sia-no-such-account-x", "client:alice", false};
  c.node = "t4-0";
  StartResult r = l.start(c);
  CHECK(r.pid == -1);
  CHECK(r.error == "node t4-0: account sia-no-such-account-x does not exist");
  CHECK(slurp(c.log) == "sia-run: node t4-0: account sia-no-such-account-x does not exist\n");
  CHECK_FALSE(std::ifstream(tmp / "ran").good());
}
