#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

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

TEST_CASE("wait_lock_file waits for the holder, then holds", "[os][lock]") {
  TempDir tmp;
  const std::string path = tmp / "lock";
  std::optional<FileLock> held = wait_lock_file(path, "1 (first)");
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    FileLock mine = wait_lock_file(path, "2 (second)");
    got = true;
  });
  // While held, the waiter cannot have it, nor can anyone else.
  CHECK_FALSE(try_lock_file(path, "3").lock);
  CHECK_FALSE(got);
  held.reset();
  waiter.join();
  CHECK(got);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "2 (second)");
}

TEST_CASE("a removed lock file is locked afresh by the one who waited", "[os][lock]") {
  TempDir tmp;
  const std::string path = tmp / "lock";
  std::optional<FileLock> first = wait_lock_file(path, "1");
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    FileLock mine = wait_lock_file(path, "2");
    got = true;
  });
  ::unlink(path.c_str());  // removed by its holder, then released
  first.reset();
  waiter.join();
  CHECK(got);
  std::ifstream in(path);  // made again, by the waiter
  std::string line;
  std::getline(in, line);
  CHECK(line == "2");
}

TEST_CASE("a lock file is never opened through a symbolic link", "[os][lock]") {
  TempDir tmp;
  std::ofstream(tmp / "target") << "keep\n";
  std::filesystem::create_symlink(tmp / "target", tmp / "lock");
  CHECK_THROWS_WITH(wait_lock_file(tmp / "lock", "1"),
                    Catch::Matchers::StartsWith(tmp.path() + "/lock: cannot open: "));
  CHECK_THROWS(try_lock_file(tmp / "lock", "1"));
  std::ifstream in(tmp / "target");
  std::string line;
  std::getline(in, line);
  CHECK(line == "keep");  // not truncated
}

TEST_CASE("make_dirs creates parents and says what it cannot create", "[os][lock]") {
  TempDir tmp;
  make_dirs(tmp / "x/y/z");
  make_dirs(tmp / "x/y/z");  // already there: fine
  std::ofstream(tmp / "file") << "";
  CHECK_THROWS_WITH(make_dirs(tmp / "file/sub"),
                    Catch::Matchers::StartsWith(tmp.path() + "/file/sub: cannot create: "));
}
