// Root only: a program started as another account really runs as it. Exits 77 (ctest
// skips it) when not run as root.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "exec/temp_dir.hpp"
#include "os/account.hpp"
#include "os/safe_open.hpp"
#include "os/spawn.hpp"
#include "root_only.hpp"

using namespace sia::os;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

TEST_CASE("root starts a program as nobody: its ids, groups and environment", "[os][root]") {
  sia::test::require_root("switching users");
  auto nobody = find_account("nobody");
  REQUIRE(nobody);
  TempDir tmp;
  ::chmod(tmp.path().c_str(), 0755);
  SpawnOptions o;
  o.argv = {"sh", "-c", "id -u; id -g; id -G; echo \"$USER $LOGNAME $HOME\"; touch mine"};
  o.account = nobody;
  o.cwd = tmp / "work";
  ::mkdir(o.cwd.c_str(), 0755);
  give_fd(open_dir(o.cwd).get(), *nobody, 0755, o.cwd);
  o.out = Stream::truncate(tmp / "out");  // opened by root, before the switch
  Process p = spawn(o);
  REQUIRE(p.exec_errno() == 0);
  REQUIRE(p.wait().success());
  std::string groups;
  for (gid_t g : nobody->groups) groups += (groups.empty() ? "" : " ") + std::to_string(g);
  CHECK(slurp(tmp / "out") == std::to_string(nobody->uid) + "\n" + std::to_string(nobody->gid) +
                                  "\n" + groups + "\nnobody nobody " + nobody->home + "\n");
  struct stat st {};
  REQUIRE(::stat((o.cwd + "/mine").c_str(), &st) == 0);
  CHECK(st.st_uid == nobody->uid);
}

TEST_CASE("a program that cannot enter its directory as nobody is reported, not run as root",
          "[os][root]") {
  sia::test::require_root("switching users");
  auto nobody = find_account("nobody");
  REQUIRE(nobody);
  TempDir tmp;
  ::chmod(tmp.path().c_str(), 0700);  // root's only
  SpawnOptions o;
  o.argv = {"sh", "-c", "id -u > " + tmp / "ran"};
  o.account = nobody;
  o.cwd = tmp.path();
  Process p = spawn(o);
  CHECK(p.exec_errno() != 0);
  CHECK(p.exec_error().find("cannot change to directory") == 0);
  p.wait();
  CHECK_FALSE(std::ifstream(tmp / "ran").good());
}
