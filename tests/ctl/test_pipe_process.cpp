#include <catch2/catch.hpp>

#include <signal.h>

#include <string>

#include "ctl/pipe_process.hpp"

using namespace sia::ctl;

TEST_CASE("a program that leaves its input unread does not kill us with SIGPIPE", "[pipe]") {
  // The test process keeps SIGPIPE's default action (fatal), as a library's caller may.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  struct sigaction old {};
  ::sigaction(SIGPIPE, &dfl, &old);
  const std::string input(8 << 20, 'x');  // more than any pipe buffer
  for (int i = 0; i < 3; ++i) {
    PipedResult r = run_piped({"sh", "-c", "exit 3"}, input, 30);
    CHECK(r.status == 3);
    CHECK_FALSE(r.timed_out);
  }
  PipedResult ok = run_piped({"sh", "-c", "head -c 5"}, input, 30);
  CHECK(ok.status == 0);
  CHECK(ok.out == "xxxxx");
  ::sigaction(SIGPIPE, &old, nullptr);
}
