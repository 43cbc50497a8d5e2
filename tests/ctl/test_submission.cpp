#include <catch2/catch.hpp>

#include "ctl/submission.hpp"

using namespace sia;
using namespace sia::ctl;

TEST_CASE("a submission records where it was made, unless a job says", "[submission]") {
  Submission s;
  s.jobs.resize(2);
  s.jobs[0].name = "a";
  s.jobs[1].name = "b";
  s.jobs[0].model = s.jobs[1].model = "cifar10";
  s.jobs[1].workdir = "/data/b";
  record_workdir(s, "/home/alice/cnn");
  CHECK(s.jobs[0].workdir == "/home/alice/cnn");
  CHECK(s.jobs[1].workdir == "/data/b");
  // It travels with the request (the inbox file, the channel's SUBMIT).
  const nlohmann::json body = submission_body(s);
  Submission back = parse_submission_body(Node(body, "request", ""));
  REQUIRE(back.jobs.size() == 2);
  CHECK(back.jobs[0].workdir == "/home/alice/cnn");
}
