// os/remove_tree.hpp as the attacker who owns the tree: links planted inside it or at its
// top are removed themselves and what they point at is left as it was; deep trees are
// refused; nothing there is no error. Runs as any user.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "exec/temp_dir.hpp"
#include "os/remove_tree.hpp"
#include "os/safe_open.hpp"
#include "test_util.hpp"

using namespace sia::os;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;
using sia::test::error_of;
namespace fs = std::filesystem;

namespace {

bool exists_here(const std::string& path) {  // the name itself, a link not followed
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Outside the tree: a directory holding a file, both of which must survive.
struct Outside {
  explicit Outside(const TempDir& tmp) : dir(tmp / "outside"), file(dir + "/precious") {
    fs::create_directories(dir);
    std::ofstream(file) << "keep me\n";
  }
  void check() const {
    CHECK(fs::is_directory(fs::symlink_status(dir)));
    CHECK(slurp(file) == "keep me\n");
  }
  std::string dir, file;
};

}  // namespace

TEST_CASE("remove_tree removes nested directories and their files", "[remove_tree]") {
  TempDir tmp;
  const std::string tree = tmp / "job";
  fs::create_directories(tree + "/a/b/c");
  fs::create_directories(tree + "/empty");
  std::ofstream(tree + "/gen-1.sh") << "#!/bin/sh\n";
  std::ofstream(tree + "/a/b/c/deep") << "x";
  std::ofstream(tree + "/a/file") << "y";
  REQUIRE(::mkfifo((tree + "/a/b/fifo").c_str(), 0600) == 0);  // unlinked, never opened
  ::chmod((tree + "/a/b").c_str(), 0);  // unreadable to its user: root lists it all the same
  if (::geteuid() != 0) ::chmod((tree + "/a/b").c_str(), 0700);
  CHECK(remove_tree(tree));
  CHECK_FALSE(exists_here(tree));
  CHECK(fs::is_directory(tmp.path()));
}

TEST_CASE("remove_tree removes a link inside the tree, never what it points at", "[remove_tree]") {
  TempDir tmp;
  Outside out(tmp);
  const std::string tree = tmp / "job";
  fs::create_directories(tree + "/sub");
  // Links to the outside directory, to its file, and one more level down.
  fs::create_directory_symlink(out.dir, tree + "/to-dir");
  fs::create_symlink(out.file, tree + "/to-file");
  fs::create_directory_symlink(out.dir, tree + "/sub/again");
  fs::create_symlink("/nonexistent/dangling", tree + "/dangling");
  CHECK(remove_tree(tree));
  CHECK_FALSE(exists_here(tree));
  out.check();
}

TEST_CASE("remove_tree removes a link at the tree's top as a link", "[remove_tree]") {
  TempDir tmp;
  Outside out(tmp);
  Fd parent = open_dir(tmp.path());
  REQUIRE(::symlink(out.dir.c_str(), (tmp / "job").c_str()) == 0);
  CHECK(remove_tree_in(parent.get(), "job", tmp / "job"));
  CHECK_FALSE(exists_here(tmp / "job"));
  out.check();
  // The same through the path: the parent is opened, the link at the name not followed.
  REQUIRE(::symlink(out.dir.c_str(), (tmp / "job").c_str()) == 0);
  CHECK(remove_tree(tmp / "job"));
  CHECK_FALSE(exists_here(tmp / "job"));
  out.check();
}

TEST_CASE("remove_tree refuses a parent that is a link, and names that are no single name",
          "[remove_tree]") {
  TempDir tmp;
  Outside out(tmp);
  fs::create_directory_symlink(out.dir, tmp / "parent");
  auto [status, message] = error_of([&] { remove_tree(tmp / "parent/precious"); });
  CHECK(status == 77);
  CHECK(message == tmp / "parent" + ": refused: not a directory (a symbolic link?)");
  out.check();
  Fd parent = open_dir(tmp.path());
  for (const std::string bad : {"", ".", "..", "outside/precious"}) {
    CHECK(error_of([&] { remove_tree_in(parent.get(), bad, tmp / bad); }).first == 77);
  }
  out.check();
}

TEST_CASE("remove_tree: nothing there is no error", "[remove_tree]") {
  TempDir tmp;
  CHECK_FALSE(remove_tree(tmp / "missing"));
  CHECK_FALSE(remove_tree(tmp / "no-parent/missing"));
  Fd parent = open_dir(tmp.path());
  CHECK_FALSE(remove_tree_in(parent.get(), "missing", tmp / "missing"));
}

TEST_CASE("remove_tree: a file where a directory was expected", "[remove_tree]") {
  TempDir tmp;
  SECTION("at the tree's name: removed as the one file it is") {
    std::ofstream(tmp / "job") << "not a directory\n";
    CHECK(remove_tree(tmp / "job"));
    CHECK_FALSE(exists_here(tmp / "job"));
  }
  SECTION("as the tree's parent: refused with the path") {
    std::ofstream(tmp / "slurm") << "not a directory\n";
    auto [status, message] = error_of([&] { remove_tree(tmp / "slurm/job"); });
    CHECK(status == 77);
    CHECK(message == tmp / "slurm" + ": refused: not a directory (a symbolic link?)");
    CHECK(slurp(tmp / "slurm") == "not a directory\n");
  }
}

TEST_CASE("remove_tree refuses a tree deeper than its limit", "[remove_tree]") {
  TempDir tmp;
  Outside out(tmp);
  const std::string tree = tmp / "job";
  fs::create_directories(tree + "/1/2/3");
  std::ofstream(tree + "/1/2/3/file") << "z";
  fs::create_directory_symlink(out.dir, tree + "/1/2/3/link");
  SECTION("three levels of directories under the top: refused with a limit of 3") {
    auto [status, message] = error_of([&] { remove_tree(tree, 3); });
    CHECK(status == 77);
    CHECK(message == tree + "/1/2/3: refused: deeper than 3 levels");
    CHECK(exists_here(tree + "/1/2/3/file"));
  }
  SECTION("removed with a limit of 4") {
    CHECK(remove_tree(tree, 4));
    CHECK_FALSE(exists_here(tree));
  }
  out.check();
}
