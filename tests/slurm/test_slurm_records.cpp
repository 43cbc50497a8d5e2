#include <catch2/catch.hpp>

#include <ctime>

#include "slurm/job_mark.hpp"
#include "slurm/slurm_fields.hpp"
#include "slurm/slurm_jobs.hpp"
#include "slurm/slurm_nodes.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::slurm;
using sia::test::error_of;

TEST_CASE("hostlists expand, keeping zero padding", "[slurm]") {
  CHECK(expand_hostlist("n[1-3,07-08],x") ==
        std::vector<std::string>{"n1", "n2", "n3", "n07", "n08", "x"});
  CHECK(expand_hostlist("(null)").empty());
  CHECK(error_of([] { expand_hostlist("n[3-1]"); }).first == 65);
  CHECK(error_of([] { expand_hostlist("n[1-2"); }).first == 65);
  CHECK(error_of([] { expand_hostlist("n[0-99999999]"); }).first == 65);
}

TEST_CASE("GPU GRES lists: typed, untyped, sockets, other GRES", "[slurm]") {
  auto g = parse_gpu_gres("gpu:a100:4(S:0-1),shard:2,gpu:t4:2(IDX:0-1)", "x");
  REQUIRE(g.size() == 2);
  CHECK(g[0] == GpuGres{"a100", 4});
  CHECK(g[1] == GpuGres{"t4", 2});
  CHECK(parse_gpu_gres("gpu:3", "x") == std::vector<GpuGres>{{"", 3}});
  CHECK(parse_gpu_gres("gres:gpu:a100:2", "x") == std::vector<GpuGres>{{"a100", 2}});
  CHECK(parse_gpu_gres("(null)", "x").empty());
  auto [status, message] = error_of([] { parse_gpu_gres("gpu:a:b:c", "node n1: Gres"); });
  CHECK(status == 65);
  CHECK(message == "node n1: Gres: expected GRES like gpu:TYPE:COUNT, got \"gpu:a:b:c\"");
}

TEST_CASE("scontrol show node: state flags, GRES, partitions", "[slurm]") {
  auto nodes = parse_nodes(
      "NodeName=n2 Arch=x86_64 Gres=gpu:t4:2 NodeAddr=10.0.0.2 State=IDLE+DRAIN "
      "Partitions=sia GresUsed=gpu:t4:0(IDX:N/A) Reason=disk full [root@2026]\n"
      "NodeName=n1 Gres=gpu:a100:4(S:0-1) GresUsed=gpu:a100:3(IDX:0-2) State=MIXED "
      "Partitions=sia,debug\n"
      "NodeName=n3 Gres=gpu:a100:4 State=IDLE* Partitions=sia\n");
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].name == "n1");
  CHECK(nodes[0].address == "n1");
  CHECK(nodes[0].usable());
  CHECK(nodes[0].gpu_total() == 4);
  CHECK(nodes[0].gpu_used() == 3);
  CHECK(nodes[0].in_partition("debug"));
  CHECK(nodes[1].address == "10.0.0.2");
  CHECK(!nodes[1].usable());  // drained
  CHECK(!nodes[2].usable());  // not responding
  auto [status, message] = error_of([] { parse_nodes("Arch=x86_64 State=IDLE\n"); });
  CHECK(status == 65);
  CHECK(message == "slurm: scontrol show node: line 1: expected NodeName=NAME");
}

TEST_CASE("scontrol show job: user, comment, GPUs per node", "[slurm]") {
  auto jobs = parse_jobs(
      "JobId=7 JobName=sia.j.2 UserId=sia(990) Partition=sia JobState=RUNNING NodeList=n[1-2] "
      "JOB_GRES=gpu:a100:2 Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:a100:2(IDX:0-1) Nodes=n2 "
      "CPU_IDs=0 Mem=0 GRES=gpu:a100:1(IDX:3) Comment=sia:j:2 Nodes=n9 GRES=gpu:a100:9\n"
      "JobId=8 JobName=other UserId=bob(1001) JobState=PENDING NodeList=(null) "
      "Comment=free text Nodes=n1 GRES=gpu:a100:4\n");
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].user_id == 990);
  CHECK(jobs[0].holds_nodes());
  CHECK(jobs[0].gpus_on("n1") == 2);
  CHECK(jobs[0].gpus_on("n2") == 1);
  CHECK(jobs[0].gpus_on("n9") == 0);  // after the comment: not read
  CHECK(jobs[1].comment == "free text");
  CHECK(!jobs[1].holds_nodes());
  CHECK(jobs[1].gpus_per_node.empty());
  CHECK(error_of([] { parse_jobs("JobId=1 UserId=bob\n"); }).second ==
        "slurm: scontrol show job: line 1 (job 1): UserId: expected NAME(UID)");
}

TEST_CASE("scontrol show job: SubmitTime, local time, never from the job's name", "[slurm]") {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 11;
  tm.tm_mday = 5;
  tm.tm_hour = 8;
  tm.tm_min = 40;
  tm.tm_isdst = -1;
  const double t = static_cast<double>(std::mktime(&tm));
  CHECK(parse_slurm_time("2026-12-05T08:40:00") == t);
  CHECK(parse_slurm_time("2026-12-05T08:40:07") == t + 7);
  for (const char* bad : {"Unknown", "None", "", "2026-12-05 08:40:00", "2026-13-05T08:40:00",
                          "2026-12-05T08:40:0x", "2026-12-05T08:40:000"}) {
    CHECK(parse_slurm_time(bad) == 0);
  }
  auto jobs = parse_jobs(
      "JobId=7 JobName=x SubmitTime=2026-12-05T08:39:00 UserId=bob(1001) JobState=RUNNING "
      "SubmitTime=2026-12-05T08:40:00 NodeList=(null)\n"
      "JobId=8 JobName=y UserId=bob(1001) JobState=PENDING SubmitTime=Unknown NodeList=(null)\n");
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].submit_time == t);  // the name's is the user's text
  CHECK(jobs[1].submit_time == 0);
}

TEST_CASE("sia's job mark round-trips; other comments are not marks", "[slurm]") {
  JobMark m{"train-7", 3};
  CHECK(mark_comment(m) == "sia:train-7:3");
  CHECK(mark_job_name(m) == "sia.train-7.3");
  CHECK(parse_mark_comment(mark_comment(m)) == m);
  CHECK(!parse_mark_comment("sia:train-7:"));
  CHECK(!parse_mark_comment("sia::3"));
  CHECK(!parse_mark_comment("sia:../x:3"));
  CHECK(!parse_mark_comment("sia:a:-1"));
  CHECK(!parse_mark_comment("my job"));
  // With the submission's secret: parsed, kept, compared.
  JobMark t{"train-7", 3, "0abc9z"};
  CHECK(mark_comment(t) == "sia:train-7:3:0abc9z");
  CHECK(parse_mark_comment(mark_comment(t)) == t);
  CHECK(parse_mark_comment("sia:train-7:3:0abc9z")->token == "0abc9z");
  CHECK(!(parse_mark_comment("sia:train-7:3") == t));
  CHECK(!parse_mark_comment("sia:train-7:3:"));
  CHECK(!parse_mark_comment("sia:train-7:3:ABC"));
  CHECK(!parse_mark_comment("sia:train-7:3:a:b"));
  CHECK(!parse_mark_comment("sia:train-7:3:a b"));
  CHECK(!parse_mark_comment("sia:train-7:3:" + std::string(kMaxMarkToken + 1, 'a')));
  CHECK(parse_mark_comment("sia:train-7:3:" + std::string(kMaxMarkToken, 'a')));
}
