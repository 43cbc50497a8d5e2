#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>

#include "ctl/client_backend.hpp"
#include "ctl_test_util.hpp"

using namespace sia;
using namespace sia::ctl;
namespace ct = sia::ctl::test;
namespace fs = std::filesystem;

TEST_CASE("an external solve stage receives the configured knobs", "[round][stage][knobs]") {
  const std::string bin = SIA_TEST_BIN_DIR;
  ct::TempDir tmp;
  // A solve stage that keeps its environment, then runs sia-solve.
  const std::string script = tmp / "solve.sh";
  const std::string env_file = tmp / "env.txt";
  ct::write_text(script, "#!/bin/sh\nenv > " + env_file + "\nexec " + bin + "/sia-solve \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  ct::RoundFixture f({{"stages.solve", script},
                      {"controller.p", "1"},
                      {"controller.lambda_n", "-1.5"},
                      {"controller.themis_f", "0.25"},
                      {"controller.restart_remaining", "false"},
                      {"controller.pollux_p", "-2"}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  CHECK(f.placed_in(0) == std::set<std::string>{"a"});
  std::set<std::string> lines;
  std::istringstream in(ct::slurp(env_file));
  for (std::string line; std::getline(in, line);) lines.insert(line);
  CHECK(lines.count("SIA_CTL_P=1"));
  CHECK(lines.count("SIA_CTL_LAMBDA_N=-1.5"));
  CHECK(lines.count("SIA_CTL_THEMIS_F=0.25"));
  CHECK(lines.count("SIA_CTL_RESTART_REMAINING=false"));
  CHECK(lines.count("SIA_CTL_POLLUX_P=-2"));
  CHECK(lines.count("SIA_CTL_TIME_LIMIT=1"));  // the fixture's --time-limit
  CHECK(lines.count("SIA_CTL_SEED=1"));        // a default is passed too
}
