// lib/channel/lease_memory: the leases a controller keeps of its nodes in its state
// directory -- written atomically and only on a change, read tolerantly (a missing file,
// a bad one or a symbolic link is no lease known, a bad one said in one line).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "channel/lease_memory.hpp"
#include "exec/temp_dir.hpp"

using namespace sia::channel;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

namespace {

// A LeaseMemory on DIR/leases.json with its warnings kept.
struct Memory {
  std::vector<std::string> warnings;
  LeaseMemory memory;
  explicit Memory(const std::string& path)
      : memory(path, [this](const std::string& w) { warnings.push_back(w); }) {}
};

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("a remembered lease is read back by the next controller", "[lease]") {
  TempDir dir;
  const std::string path = dir / "leases.json";
  {
    Memory m(path);  // none yet: nothing known, nothing said, nothing written
    CHECK(m.memory.leases().empty());
    CHECK(m.warnings.empty());
    CHECK_FALSE(std::filesystem::exists(path));
    m.memory.remember("t4-0", Lease{30, 610});
    m.memory.remember("t4-1", Lease{5, 15});
    CHECK(m.warnings.empty());
  }
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(slurp(path) ==
        R"({"apiVersion":"sia/v1","kind":"NodeLeases","metadata":{"generator":"sia-ctl serve"},)"
        R"("data":{"nodes":{"t4-0":{"fence_after":30.0,"grace":610.0},)"
        R"("t4-1":{"fence_after":5.0,"grace":15.0}}}})"
        "\n");
  Memory next(path);
  CHECK(next.warnings.empty());
  REQUIRE(next.memory.leases().size() == 2);
  CHECK(next.memory.leases().at("t4-0").fence_after == 30);
  CHECK(next.memory.leases().at("t4-0").grace == 610);
  // Before their READY the nodes have these; another node the assumed lease.
  CHECK(lease_before_ready(next.memory.leases(), "t4-0", 7).grace == 610);
  CHECK(lease_before_ready(next.memory.leases(), "t4-9", 7).fence_after == 7);
  CHECK(lease_before_ready(next.memory.leases(), "t4-9", 7).grace == assumed_lease(7).grace);
}

TEST_CASE("the lease file is written only when a lease changed", "[lease]") {
  TempDir dir;
  const std::string path = dir / "leases.json";
  Memory m(path);
  m.memory.remember("t4-0", Lease{30, 610});
  std::filesystem::remove(path);
  m.memory.remember("t4-0", Lease{30, 610});  // a reconnect with the same lease
  CHECK_FALSE(std::filesystem::exists(path));
  m.memory.remember("t4-1", std::nullopt);  // no lease, none known: nothing to forget
  CHECK_FALSE(std::filesystem::exists(path));
  m.memory.remember("t4-0", Lease{30, 20});  // restarted with another --grace
  CHECK(Memory(path).memory.leases().at("t4-0").grace == 20);
  m.memory.remember("t4-0", std::nullopt);  // an older agent: the assumed lease applies
  CHECK(Memory(path).memory.leases().empty());
  CHECK(m.warnings.empty());
}

TEST_CASE("a bad lease file is one warning naming the file and field, and no lease", "[lease]") {
  TempDir dir;
  const std::string path = dir / "leases.json";
  struct Case {
    std::string text, said;
  };
  for (
      const auto& c : std::vector<Case>{
          {"{not json", path + ":"},
          {R"({"apiVersion":"sia/v1","kind":"Jobs","data":{}})", "NodeLeases"},
          {R"({"apiVersion":"sia/v1","kind":"NodeLeases","data":{"nodes":[]}})",
           "nodes: expected an object of leases by node"},
          {R"({"apiVersion":"sia/v1","kind":"NodeLeases","data":{"nodes":{"n":{"fence_after":0,"grace":1}}}})",
           "nodes.n.fence_after: expected"},
          {R"({"apiVersion":"sia/v1","kind":"NodeLeases","data":{"nodes":{"n":{"fence_after":1}}}})",
           "grace"}}) {
    CAPTURE(c.text);
    write(path, c.text);
    Memory m(path);
    CHECK(m.memory.leases().empty());
    REQUIRE(m.warnings.size() == 1);
    CHECK(m.warnings[0].find(path) == 0);
    CHECK(m.warnings[0].find(c.said) != std::string::npos);
    CHECK(m.warnings[0].find("the assumed lease") != std::string::npos);
    CHECK(m.warnings[0].find('\n') == std::string::npos);
    // The next READY writes a good file over it.
    m.memory.remember("n", Lease{1, 2});
    CHECK(Memory(path).memory.leases().size() == 1);
  }
}

TEST_CASE("a lease file that is a symbolic link is neither read nor written through", "[lease]") {
  TempDir dir;
  const std::string path = dir / "leases.json";
  const std::string target = dir / "elsewhere.json";
  LeaseMemory(target, [](const std::string&) {}).remember("n", Lease{1, 2});
  const std::string before = slurp(target);
  std::filesystem::create_symlink(target, path);
  Memory m(path);
  CHECK(m.memory.leases().empty());
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].find("symbolic link") != std::string::npos);
  m.memory.remember("n", Lease{3, 4});
  CHECK(slurp(target) == before);  // the link is replaced, its target untouched
  CHECK_FALSE(std::filesystem::is_symlink(path));
  CHECK(Memory(path).memory.leases().at("n").fence_after == 3);
}
