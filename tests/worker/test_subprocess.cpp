#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "worker/subprocess.hpp"

using namespace sia::worker;
namespace fs = std::filesystem;

TEST_CASE("a subprocess's status, environment, log and time limit", "[worker][subprocess]") {
  const std::string log =
      (fs::temp_directory_path() / ("sia-sub-" + std::to_string(::getpid()) + ".log")).string();
  fs::remove(log);
  Subprocess p;
  p.argv = {"/bin/sh", "-c", "echo \"x=$SIA_X\"; echo oops >&2; exit 3"};
  p.env = {{"SIA_X", "42"}};
  p.log_path = log;
  ExitInfo e = run_subprocess(p);
  CHECK(e.status == 3);
  CHECK_FALSE(e.timed_out);
  CHECK(tail_of_file(log, 5) == "x=42\noops\n");
  CHECK(tail_of_file(log, 1) == "oops\n");

  p.argv = {"/bin/sh", "-c", "kill -KILL $$"};
  CHECK(run_subprocess(p).status == 128 + 9);

  p.argv = {"/nonexistent/program"};
  CHECK(run_subprocess(p).status == 127);
  CHECK(tail_of_file(log, 1).find("exec /nonexistent/program: ") == 0);

  // The whole process group gets SIGTERM at the limit.
  p.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30; wait"};
  p.timeout = 0.3;
  e = run_subprocess(p);
  CHECK(e.timed_out);
  CHECK(e.status == 128 + 15);
  CHECK(e.seconds < 5);
  fs::remove(log);
}
