// os/safe_open.hpp, os/atomic_file.hpp, os/make_dirs.hpp and os/checkpoint_dir.hpp's rule
// for names another user controls: links, FIFOs and hard links planted at a name are refused
// and their targets left as they were; modes do not depend on the umask. Runs as any user
// (the root-only privilege suite is tests/exec/test_root_paths.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "core/error.hpp"
#include "exec/temp_dir.hpp"
#include "os/atomic_file.hpp"
#include "os/checkpoint_dir.hpp"
#include "os/make_dirs.hpp"
#include "os/safe_open.hpp"

using namespace sia::os;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

namespace {

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sia::Error& e) {
    return sia::to_int(e.status());
  }
  return 0;
}

int mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return static_cast<int>(st.st_mode & 07777);
}

bool is_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Sets the umask for one scope.
struct Umask {
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};

}  // namespace

TEST_CASE("open_in refuses a link, a FIFO and a second hard link, and leaves them", "[safe_open]") {
  TempDir tmp;
  std::ofstream(tmp / "target") << "secret\n";
  Fd dir = open_dir(tmp.path());
  REQUIRE(::symlink((tmp / "target").c_str(), (tmp / "link").c_str()) == 0);
  for (auto access : {Access::read, Access::append, Access::read_write}) {
    CHECK(status_of([&] { open_in(dir.get(), "link", access, false, 0600, tmp / "link"); }) == 77);
    CHECK(status_of([&] { open_in(dir.get(), "link", access, true, 0600, tmp / "link"); }) == 77);
  }
  REQUIRE(::mkfifo((tmp / "fifo").c_str(), 0600) == 0);  // no writer: a blocking open hangs
  CHECK(status_of([&] { open_file(tmp / "fifo", Access::read); }) == 77);
  REQUIRE(::link((tmp / "target").c_str(), (tmp / "hard").c_str()) == 0);
  try {
    open_file(tmp / "hard", Access::append);
    FAIL("a second hard link was opened");
  } catch (const sia::Error& e) {
    CHECK(std::string(e.what()) == tmp / "hard" + ": refused: has 2 hard links");
  }
  CHECK(slurp(tmp / "target") == "secret\n");
  CHECK_FALSE(open_file(tmp / "missing", Access::read));  // absent: an empty Fd
  CHECK(status_of([&] { open_in(dir.get(), "../target", Access::read, false, 0600, "x"); }) == 77);
}

TEST_CASE("open_in makes a missing file with exactly its mode and appends to it", "[safe_open]") {
  TempDir tmp;
  Umask none(0);
  {
    Fd f = open_file(tmp / "log", Access::append, true, kPrivateFile);
    REQUIRE(f);
    append_text(f.get(), "one\n");
  }
  CHECK(mode_of(tmp / "log") == 0600);
  {
    Fd f = open_file(tmp / "log", Access::append, true, 0644);  // found: mode left alone
    append_text(f.get(), "two\n");
  }
  CHECK(mode_of(tmp / "log") == 0600);
  Fd r = open_file(tmp / "log", Access::read);
  CHECK(file_size(r.get(), "log") == 8);
  CHECK(read_at(r.get(), 4, 100) == "two\n");
}

TEST_CASE("open_dir refuses a directory that is a link", "[safe_open]") {
  TempDir tmp;
  make_dirs(tmp / "real");
  REQUIRE(::symlink((tmp / "real").c_str(), (tmp / "alias").c_str()) == 0);
  CHECK(status_of([&] { open_dir(tmp / "alias"); }) == 77);
  CHECK(status_of([&] { open_file(tmp / "alias/x", Access::read); }) == 77);
  CHECK(status_of([&] { open_dir(tmp / "none"); }) == 66);
  CHECK(open_dir(tmp / "real"));
}

TEST_CASE("an atomic write replaces a planted link, never writes through it", "[safe_open]") {
  TempDir tmp;
  std::ofstream(tmp / "target") << "secret\n";
  REQUIRE(::symlink((tmp / "target").c_str(), (tmp / "state.json").c_str()) == 0);
  // Every name the old scheme used for its temporary (".NAME.tmp.PID") is a link too.
  const std::string old_tmp = tmp / ".state.json.tmp." + std::to_string(::getpid());
  REQUIRE(::symlink((tmp / "target").c_str(), old_tmp.c_str()) == 0);
  write_file_atomic(tmp / "state.json", "new\n");
  CHECK(slurp(tmp / "target") == "secret\n");
  CHECK_FALSE(is_link(tmp / "state.json"));
  CHECK(slurp(tmp / "state.json") == "new\n");
  CHECK(mode_of(tmp / "state.json") == 0600);  // private by default
  {
    Umask none(0);
    write_file_atomic(tmp / "out.json", "x\n", kPublicFile);
    CHECK(mode_of(tmp / "out.json") == 0644);
    write_file_atomic(tmp / "p.json", "x\n");
    CHECK(mode_of(tmp / "p.json") == 0600);  // private whatever the umask
  }
}

TEST_CASE("make_dirs gives each directory it makes exactly its mode", "[safe_open]") {
  TempDir tmp;
  {
    Umask none(0);
    make_dirs(tmp / "a/b");
    CHECK(mode_of(tmp / "a") == 0700);
    CHECK(mode_of(tmp / "a/b") == 0700);
  }
  {
    Umask strict(077);
    make_dirs(tmp / "c/d", 0711);
    CHECK(mode_of(tmp / "c") == 0711);
    CHECK(mode_of(tmp / "c/d") == 0711);
  }
  ::chmod((tmp / "a").c_str(), 0750);
  make_dirs(tmp / "a/b/e");  // existing ones are left alone
  CHECK(mode_of(tmp / "a") == 0750);
}

TEST_CASE("give_in gives a file or directory and refuses a link or hard link", "[safe_open]") {
  TempDir tmp;
  const Account self = current_account();
  std::ofstream(tmp / "target") << "x";
  ::chmod((tmp / "target").c_str(), 0644);
  Fd dir = open_dir(tmp.path());
  REQUIRE(::symlink((tmp / "target").c_str(), (tmp / "link").c_str()) == 0);
  REQUIRE(::link((tmp / "target").c_str(), (tmp / "hard").c_str()) == 0);
  CHECK(status_of([&] { give_in(dir.get(), "link", self, 0600, tmp / "link"); }) == 77);
  CHECK(status_of([&] { give_in(dir.get(), "hard", self, 0600, tmp / "hard"); }) == 77);
  CHECK(mode_of(tmp / "target") == 0644);
  CHECK_FALSE(give_in(dir.get(), "missing", self, 0600, tmp / "missing"));
  make_dirs(tmp / "d", 0755);
  CHECK(give_in(dir.get(), "d", self, kPrivateDir, tmp / "d"));
  CHECK(mode_of(tmp / "d") == 0700);
}

TEST_CASE("the checkpoint directory's files are never followed through links", "[safe_open]") {
  TempDir tmp;
  const std::string ckpt = tmp / "ckpt";
  make_dirs(ckpt);
  std::ofstream(tmp / "target") << "99\n";
  for (const char* name : {"generation", "finished"}) {
    REQUIRE(::symlink((tmp / "target").c_str(), (ckpt + "/" + name).c_str()) == 0);
  }
  CHECK(checkpoint_generation(ckpt) == 0);  // the link is not read
  CHECK_FALSE(checkpoint_finished(ckpt));
  const std::string old_tmp = ckpt + "/.generation.tmp." + std::to_string(::getpid());
  REQUIRE(::symlink((tmp / "target").c_str(), old_tmp.c_str()) == 0);
  raise_checkpoint_generation(ckpt, 5);
  mark_checkpoint_finished(ckpt, 5);
  CHECK(slurp(tmp / "target") == "99\n");
  CHECK(checkpoint_generation(ckpt) == 5);
  CHECK(checkpoint_finished(ckpt) == 5L);
  // A link at .lock: refused, and nothing is created where it points.
  const std::string other = tmp / "other";
  make_dirs(other);
  REQUIRE(::symlink((tmp / "made-by-the-lock").c_str(), (other + "/.lock").c_str()) == 0);
  CHECK(status_of([&] { CheckpointDirLock lock(other); }) == 77);
  CHECK_FALSE(std::ifstream(tmp / "made-by-the-lock").good());
}
