// core/input: every whole input is read under a size limit, and a FIFO without a writer
// is refused instead of waited on forever.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/input.hpp"
#include "test_util.hpp"

using namespace sia;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sia-input-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// Sets an environment variable for one scope.
struct EnvVar {
  std::string name;
  EnvVar(std::string n, const char* value) : name(std::move(n)) {
    ::setenv(name.c_str(), value, 1);
  }
  ~EnvVar() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("a file is read whole within the limit") {
  TempDir d;
  std::ofstream(d.file("a.json")) << "{\"x\": 1}\n";
  CHECK(read_input(d.file("a.json")) == "{\"x\": 1}\n");
  CHECK(read_input(d.file("a.json"), 9) == "{\"x\": 1}\n");
  auto e = test::error_of([&] { read_input(d.file("a.json"), 8); });
  CHECK(e.first == 65);
  CHECK(e.second == d.file("a.json") +
                        ": larger than 8 bytes, the most sia reads from one input "
                        "(SIA_MAX_INPUT)");
  auto missing = test::error_of([&] { read_input(d.file("none.json")); });
  CHECK(missing.first == 66);
  auto dir = test::error_of([&] { read_input(d.path.string()); });
  CHECK(dir.first == 66);
}

TEST_CASE("a 2 GB sparse file is refused by its size, without reading it") {
  TempDir d;
  const std::string big = d.file("big.json");
  {
    int fd = ::open(big.c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t{2} << 30) == 0);
    ::close(fd);
  }
  auto e = test::error_of([&] { read_input(big); });
  CHECK(e.first == 65);
  CHECK(e.second == big +
                        ": larger than 64 MiB, the most sia reads from one input "
                        "(SIA_MAX_INPUT)");
}

TEST_CASE("an endless device stops at the limit") {
  auto e = test::error_of([] { read_input("/dev/zero", 1 << 20); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "/dev/zero: larger than 1 MiB, the most sia reads from one input "
        "(SIA_MAX_INPUT)");
  EnvVar env("SIA_MAX_INPUT", "64K");
  CHECK(max_input_bytes() == 65536);
  auto e2 = test::error_of([] { read_input("/dev/zero"); });
  CHECK(e2.first == 65);
  CHECK(e2.second.find("larger than 64 KiB") != std::string::npos);
}

TEST_CASE("SIA_MAX_INPUT's syntax") {
  CHECK(parse_input_size("65536") == 65536);
  CHECK(parse_input_size("1K") == 1024);
  CHECK(parse_input_size("64M") == std::size_t{64} << 20);
  CHECK(parse_input_size("2g") == std::size_t{2} << 30);
  CHECK(parse_input_size("1024G") == std::size_t{1} << 40);
  for (const char* bad :
       {"", "0", "1023", "1025G", "64MB", "-1", "1.5M", "M", "99999999999999999999"}) {
    INFO(bad);
    CHECK(parse_input_size(bad) == 0);
  }
  EnvVar env("SIA_MAX_INPUT", "lots");
  auto e = test::error_of([] { max_input_bytes(); });
  CHECK(e.first == 78);
  CHECK(e.second.rfind("SIA_MAX_INPUT: expected a size", 0) == 0);
}

TEST_CASE("a FIFO is read from its writer, and refused when none comes") {
  TempDir d;
  const std::string fifo = d.file("f");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A writer that opens the FIFO after the reader: the reader waits for it.
  std::thread writer([&] {
    std::ofstream out(fifo);
    out << "{\"from\": \"a pipe\"}\n";
  });
  CHECK(read_input(fifo) == "{\"from\": \"a pipe\"}\n");
  writer.join();
  // Nobody writes: refused once the wait is over (never hangs).
  auto e = test::error_of([&] { read_input(fifo); });
  CHECK(e.first == 66);
  CHECK(e.second == fifo + ": a FIFO that no program opened for writing within 5 s");
}
