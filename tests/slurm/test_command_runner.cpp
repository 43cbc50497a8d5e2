#include <catch2/catch.hpp>

#include <unistd.h>

#include <set>
#include <sstream>
#include <string>

#include "os/account.hpp"
#include "slurm/command_runner.hpp"

using namespace sia;
using namespace sia::slurm;

TEST_CASE("run_as runs the command as the user: uid, group and groups switched", "[slurm]") {
  ProcessRunner runner(SlurmSettings{});
  CommandResult self = runner.run({"id", "-u"}, 10);
  REQUIRE(self.ran);
  CHECK(self.out == std::to_string(::geteuid()) + "\n");
  auto nobody = os::find_account("nobody");
  if (::geteuid() != 0 || !nobody) {
    WARN("run_as needs root and an account nobody: not checked");
    return;
  }
  CommandResult r = runner.run_as(*nobody, {"sh", "-c", "id -u; id -g; id -G; pwd"}, 10);
  REQUIRE(r.ran);
  CHECK(r.status == 0);
  std::istringstream lines(r.out);
  std::string uid, gid, groups, cwd;
  std::getline(lines, uid);
  std::getline(lines, gid);
  std::getline(lines, groups);
  std::getline(lines, cwd);
  CHECK(uid == std::to_string(nobody->uid));
  CHECK(gid == std::to_string(nobody->gid));
  std::set<std::string> want = {std::to_string(nobody->gid)}, got;
  for (gid_t g : nobody->groups) want.insert(std::to_string(g));
  std::istringstream words(groups);
  for (std::string w; words >> w;) got.insert(w);
  CHECK(got == want);  // root's supplementary groups are gone
  CHECK(cwd == "/");   // not the caller's directory, which the user may not enter
  // A command that cannot be executed: it did not run, and the reason says which.
  CommandResult missing = runner.run_as(*nobody, {"/nonexistent/sbatch"}, 10);
  CHECK(!missing.ran);
  CHECK(missing.err.find("cannot run /nonexistent/sbatch") != std::string::npos);
}
