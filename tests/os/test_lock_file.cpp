#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <string>

#include "exec/temp_dir.hpp"
#include "os/lock_file.hpp"
#include "os/make_dirs.hpp"

using namespace sia::os;
using sia::exec::test::TempDir;

TEST_CASE("a lock file admits one holder and names it", "[os][lock]") {
  TempDir tmp;
  const std::string path = tmp / "a/b/lock";  // its directory is created
  std::optional<LockAttempt> first = try_lock_file(path, "123 (test)");
  REQUIRE(first->lock);
  {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    CHECK(line == "123 (test)");
  }
  // A second open file description is refused, and told who holds it.
  LockAttempt second = try_lock_file(path, "456");
  CHECK_FALSE(second.lock);
  CHECK(second.holder == "123 (test)");
  // Released with the FileLock.
  first.reset();
  LockAttempt third = try_lock_file(path, "789");
  CHECK(third.lock);
}

TEST_CASE("make_dirs creates parents and says what it cannot create", "[os][lock]") {
  TempDir tmp;
  make_dirs(tmp / "x/y/z");
  make_dirs(tmp / "x/y/z");  // already there: fine
  std::ofstream(tmp / "file") << "";
  CHECK_THROWS_WITH(make_dirs(tmp / "file/sub"),
                    Catch::Matchers::StartsWith(tmp.path() + "/file/sub: cannot create: "));
}
