#include <catch2/catch.hpp>

#include <unistd.h>

#include "exec/temp_dir.hpp"
#include "os/account.hpp"
#include "os/spawn.hpp"

using namespace sia::os;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

TEST_CASE("accounts are found by name and uid", "[os][account]") {
  auto root = find_account("root");
  REQUIRE(root);
  CHECK(root->uid == 0);
  CHECK(find_account(uid_t{0})->name == "root");
  CHECK_FALSE(find_account("sia-no-such-account-x"));
  Account self = current_account();
  CHECK(self.uid == ::geteuid());
  CHECK_FALSE(self.groups.empty());
}

TEST_CASE("a program started as the caller's own account gets its HOME, USER and LOGNAME",
          "[os][account]") {
  TempDir tmp;
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo \"$(id -u) $USER $LOGNAME $HOME $SIA_X\""};
  o.env = {{"SIA_X", "1"}, {"HOME", "/given"}};  // what the caller sets wins
  o.account = current_account();
  o.out = Stream::truncate(tmp / "out");
  Process p = spawn(o);
  REQUIRE(p.exec_errno() == 0);
  CHECK(p.wait().success());
  const Account& a = *o.account;
  CHECK(slurp(tmp / "out") == std::to_string(a.uid) + " " + a.name + " " + a.name + " /given 1\n");
}
