#include <catch2/catch.hpp>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "ctl/slurm_batch.hpp"
#include "ctl/slurm_driver.hpp"
#include "ctl/slurm_generations.hpp"
#include "ctl/slurm_logs.hpp"
#include "ctl_test_util.hpp"
#include "exec/node_plan.hpp"
#include "exec/state_dir.hpp"
#include "os/account.hpp"
#include "slurm/job_mark.hpp"
#include "test_util.hpp"

#include <sys/stat.h>
#include <unistd.h>

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
using sia::ctl::test::TempDir;

namespace {

// A Slurm played by the test: `scontrol show node` prints `nodes`, `scontrol show job`
// prints `queue` (scontrol's one-line format: job_line), sbatch answers `next_id` (after
// checking the job's record is already written), every call is recorded.
constexpr long kSiaUid = 1000;

// Slurm's SubmitTime of epoch second `t`, in the local time zone as scontrol prints it.
std::string slurm_time(double t) {
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  ::localtime_r(&s, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return text;
}

std::string job_line(long id, const std::string& mark, const std::string& state, long uid = kSiaUid,
                     const std::string& nodes = "t4-0", double submitted = 1000) {
  return "JobId=" + std::to_string(id) + " JobName=" + mark + " UserId=u(" + std::to_string(uid) +
         ") JobState=" + state + " SubmitTime=" + slurm_time(submitted) +
         " Partition=gpu NodeList=" + nodes + " Nodes=" + nodes +
         " GRES=gpu:tesla_t4:1(IDX:0) Comment=" + mark + "\n";
}

struct FakeSlurm;
struct FakeRunner : slurm::CommandRunner {
  FakeSlurm* f;
  explicit FakeRunner(FakeSlurm* fake) : f(fake) {}
  slurm::CommandResult run(const std::vector<std::string>& argv, double) override;
  slurm::CommandResult run_as(const os::Account& user, const std::vector<std::string>& argv,
                              double t) override;
};

struct FakeSlurm {
  TempDir dir;
  Cluster cluster = read_cluster(sia::ctl::test::write_cluster(dir));
  std::string state = dir / "state";
  std::string shared = dir / "shared";
  std::string nodes =
      "NodeName=t4-0 Gres=gpu:tesla_t4:2 State=IDLE Partitions=gpu\n"
      "NodeName=t4-1 Gres=gpu:tesla_t4:2 State=IDLE Partitions=gpu\n";
  std::string queue;
  bool down = false;
  long next_id = 41;
  bool record_before_sbatch = false;
  std::string record_token;          // the record's token when sbatch ran
  double now = 1000;                 // the driver's wall clock
  std::function<void()> on_scancel;  // Slurm's answer to a scancel (the job ends...)
  std::vector<std::vector<std::string>> calls;
  std::vector<std::string> users;  // per call: the account it ran as ("" : the driver's own)
  json run_as;                     // the jobs' state.run_as (null: none)
  int attempt = 0;                 // the jobs' state.attempt

  SlurmDriver driver() {
    slurm::SlurmSettings s;
    s.enabled = true;
    s.shared_dir = shared;
    s.partition = "gpu";
    s.grace_seconds = 1;
    s.gres_types = {{"tesla_t4", "t4"}};
    SlurmDriverOptions o;
    o.state_dir = state;
    o.sleep = [](double) {};
    o.now = [this] { return now; };
    o.sia_uid = kSiaUid;
    return SlurmDriver(cluster, s, o, std::make_unique<FakeRunner>(this), nullptr);
  }
  Placement placement(std::vector<NodeGpus> nodes) {
    Placement p;
    JobPlacement jp;
    jp.job = "j1";
    jp.type = 0;
    jp.nodes = std::move(nodes);
    p.jobs.push_back(jp);
    return p;
  }
  json jobs_doc() {
    json j = {{"name", "j1"}, {"model", "cifar10"}, {"command", {"./worker", "--steps", "10"}}};
    if (!run_as.is_null()) j["state"]["run_as"] = run_as;
    if (attempt > 0) j["state"]["attempt"] = attempt;
    return {{"data", {{"jobs", json::array({j})}}}};
  }
  json status_of_first() {
    auto st = driver().observe();
    return st.at(0).status["jobs"];
  }
  // Slurm's nodes with `a` GPUs of t4-0 and `b` of t4-1 in use (by any job).
  void gpus_used(int a, int b) {
    nodes.clear();
    for (auto [node, used] : {std::pair<const char*, int>{"t4-0", a}, {"t4-1", b}}) {
      nodes += std::string("NodeName=") + node +
               " Gres=gpu:tesla_t4:2 GresUsed=gpu:tesla_t4:" + std::to_string(used) +
               (used ? "(IDX:0)" : "") + " State=MIXED Partitions=gpu\n";
    }
  }
  // Generation 1 of j1 on one GPU of t4-0, submitted (Slurm job 41).
  std::vector<NodeResult> first_generation() {
    SlurmDriver d = driver();
    d.observe();
    return d.deliver(1, placement({{"t4-0", {0}}}), jobs_doc());
  }
  void record(const std::string& text) {
    std::filesystem::create_directories(state + "/slurm");
    std::ofstream(state + "/slurm/j1.json") << text;
  }
  const std::vector<std::string>* last(const std::string& program) const {
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      if ((*it)[0] == program) return &*it;
    }
    return nullptr;
  }
};

slurm::CommandResult FakeRunner::run_as(const os::Account& user,
                                        const std::vector<std::string>& argv, double t) {
  slurm::CommandResult r = run(argv, t);
  f->users.back() = user.name;
  return r;
}

slurm::CommandResult FakeRunner::run(const std::vector<std::string>& argv, double) {
  f->calls.push_back(argv);
  f->users.push_back("");
  slurm::CommandResult r;
  r.ran = true;
  if (f->down) {
    r.status = 1;
    r.err = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    return r;
  }
  if (argv[0] == "scancel" && f->on_scancel) f->on_scancel();
  if (argv[0] == "scontrol") r.out = argv.back() == "node" ? f->nodes : f->queue;
  if (argv[0] == "sbatch") {
    std::ifstream rec(f->state + "/slurm/j1.json");
    f->record_before_sbatch = rec.good();
    if (rec.good()) f->record_token = json::parse(rec).value("token", "");
    r.out = std::to_string(f->next_id) + "\n";
  }
  return r;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

TEST_CASE("a job's generation is one sbatch on its nodes, recorded before it is submitted",
          "[slurm_driver]") {
  FakeSlurm f;
  SlurmDriver d = f.driver();
  d.observe();
  auto res = d.deliver(1, f.placement({{"t4-0", {0, 1}}, {"t4-1", {0, 1}}}), f.jobs_doc());
  CHECK(f.record_before_sbatch);
  const auto* sb = f.last("sbatch");
  REQUIRE(sb);
  CHECK(has(*sb, "--nodelist=t4-0,t4-1"));
  CHECK(has(*sb, "--nodes=2"));
  CHECK(has(*sb, "--gres=gpu:tesla_t4:2"));
  CHECK(has(*sb, "--ntasks-per-node=2"));
  CHECK(has(*sb, "--partition=gpu"));
  CHECK(has(*sb, "--job-name=sia.j1.1"));
  // The mark carries the submission's secret, drawn and recorded before sbatch ran.
  CHECK(f.record_token.size() == slurm::kMarkTokenLength);
  CHECK(f.record_token.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") ==
        std::string::npos);
  CHECK(has(*sb, "--comment=sia:j1:1:" + f.record_token));
  REQUIRE(res.at(0).acknowledged);
  CHECK(res.at(0).plan["actions"][0]["action"] == "start");
  CHECK(res.at(0).plan["actions"][0]["round"] == 1);
  // The script: one srun per node, each rank's worker variables, the exit file.
  std::ifstream in(sb->back());
  std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(script.find("--nodelist='t4-1' --gres=gpu:'tesla_t4':2") != std::string::npos);
  CHECK(script.find("export RANK='3'") != std::string::npos);
  CHECK(script.find("export WORLD_SIZE='4'") != std::string::npos);
  CHECK(script.find("export MASTER_ADDR='t4-0'") != std::string::npos);
  CHECK(script.find("export SIA_CKPT_DIR='" + f.shared + "/ckpt/j1'") != std::string::npos);
  CHECK(script.find("gen-1.exit") != std::string::npos);
  // The rendezvous port is scoped by the shared directory: another sia's job j1 on the
  // same nodes gets another one.
  const int port = exec::derive_port(f.shared + ":j1", 1, 29500, 29999);
  CHECK(script.find("export MASTER_PORT='" + std::to_string(port) + "'") != std::string::npos);
  json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
  CHECK(rec["slurm_job"] == 41);
  CHECK(rec["generation"] == 1);
}

TEST_CASE("unequal GPU counts per node make a heterogeneous Slurm job", "[slurm_driver]") {
  FakeSlurm f;
  SlurmDriver d = f.driver();
  d.observe();
  d.deliver(1, f.placement({{"t4-0", {0, 1}}, {"t4-1", {0}}}), f.jobs_doc());
  const auto* sb = f.last("sbatch");
  REQUIRE(sb);
  CHECK(has(*sb, ":"));
  CHECK(has(*sb, "--gres=gpu:tesla_t4:1"));
}

TEST_CASE("Slurm states map to run states the round engine knows", "[slurm_driver]") {
  FakeSlurm f;
  f.first_generation();
  SECTION("running, kept when unchanged") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    CHECK(f.status_of_first()[0]["state"] == "running");
    SlurmDriver d = f.driver();
    d.observe();
    auto res = d.deliver(2, f.placement({{"t4-0", {0}}}), f.jobs_doc());
    CHECK(res.at(0).plan["actions"][0]["action"] == "keep");
  }
  SECTION("cancelled by its user") {
    f.queue = job_line(41, "sia:j1:1", "CANCELLED");
    SECTION("before its script said anything") {}
    SECTION("its script took Slurm's TERM for a stop and wrote 75") {
      std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "75\n";
    }
    json j = f.status_of_first()[0];
    CHECK(j["state"] == "failed");
    CHECK(j["cancelled"] == true);
  }
  SECTION("node failure: killed, restarted as the next generation") {
    f.queue = job_line(41, "sia:j1:1", "NODE_FAIL");
    CHECK(f.status_of_first()[0]["state"] == "killed");
    f.next_id = 42;
    SlurmDriver d = f.driver();
    d.observe();
    auto res = d.deliver(2, f.placement({{"t4-0", {0}}}), f.jobs_doc());
    CHECK(res.at(0).plan["actions"][0]["action"] == "restart");
    CHECK(res.at(0).plan["actions"][0]["round"] == 2);
  }
  SECTION("the exit status the batch script wrote") {
    f.queue = job_line(41, "sia:j1:1", "FAILED");
    std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "3\n";
    json j = f.status_of_first()[0];
    CHECK(j["state"] == "failed");
    CHECK(j["exit_status"] == 3);
  }
  SECTION("a GPU count change checkpoint-stops it, then submits the next generation") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    SlurmDriver d = f.driver();
    d.observe();
    f.next_id = 42;
    f.on_scancel = [&f] {  // the batch script forwards TERM; the ranks exit 75
      std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "75\n";
      f.queue = job_line(41, "sia:j1:1", "FAILED");
    };
    auto res = d.deliver(2, f.placement({{"t4-0", {0, 1}}}), f.jobs_doc());
    const auto* sc = f.last("scancel");
    REQUIRE(sc);
    CHECK(*sc == std::vector<std::string>{"scancel", "--batch", "--signal=TERM", "41"});
    CHECK(res.at(0).plan["actions"][1]["action"] == "restart");
    CHECK(res.at(0).plan["actions"][1]["round"] == 2);
  }
  SECTION("still running after the grace: scancel, and no next generation this round") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    SlurmDriver d = f.driver();
    d.observe();
    f.next_id = 42;
    f.calls.clear();  // the first generation's sbatch is not this round's
    auto res = d.deliver(2, f.placement({{"t4-0", {0, 1}}}), f.jobs_doc());
    const auto* sc = f.last("scancel");
    REQUIRE(sc);
    CHECK(sc->size() == 2);  // the plain scancel after the grace
    CHECK(f.last("sbatch") == nullptr);
    CHECK(res.at(0).plan["actions"].size() == 1);  // the stop only
    auto w = d.take_warnings();
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("not ended after the 1 s grace") != std::string::npos);
  }
  SECTION("finished while it was being stopped: no generation after it") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    SlurmDriver d = f.driver();
    d.observe();
    f.on_scancel = [&f] {  // its ranks reached the step limit before the TERM
      std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "0\n";
      f.queue = job_line(41, "sia:j1:1", "COMPLETED");
    };
    f.calls.clear();  // the first generation's sbatch is not this round's
    d.deliver(2, f.placement({{"t4-0", {0, 1}}}), f.jobs_doc());
    CHECK(f.last("sbatch") == nullptr);
    CHECK(f.status_of_first()[0]["state"] == "finished");
  }
  SECTION("slurmctld gone while it was being stopped: nothing submitted") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    SlurmDriver d = f.driver();
    d.observe();
    f.on_scancel = [&f] { f.down = true; };
    f.calls.clear();  // the first generation's sbatch is not this round's
    d.deliver(2, f.placement({{"t4-0", {0, 1}}}), f.jobs_doc());
    CHECK(f.last("sbatch") == nullptr);
    json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
    CHECK(rec["stop"] == true);
    CHECK(rec["generation"] == 1);
  }
}

TEST_CASE("a new attempt on the same placement is a new generation", "[slurm_driver]") {
  FakeSlurm f;
  f.first_generation();
  REQUIRE(json::parse(std::ifstream(f.state + "/slurm/j1.json"))["attempt"] == 0);
  auto sbatches = [&f] {
    return std::count_if(f.calls.begin(), f.calls.end(),
                         [](const auto& c) { return c[0] == "sbatch"; });
  };
  // One round: observe, then deliver j1 on the same GPU of t4-0 for attempt `attempt`.
  auto round = [&f](int attempt) {
    f.attempt = attempt;
    SlurmDriver d = f.driver();
    d.observe();
    return d.deliver(2, f.placement({{"t4-0", {0}}}), f.jobs_doc());
  };
  SECTION("generation 1 failed with 69 (its ranks lost their peers): attempt 1 starts it again") {
    f.queue = job_line(41, "sia:j1:1", "FAILED");
    std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "69\n";
    f.next_id = 42;
    f.calls.clear();
    auto res = round(1);
    CHECK(sbatches() == 1);
    CHECK(f.last("scancel") == nullptr);  // nothing left to stop
    CHECK(res.at(0).plan["actions"][0]["action"] == "restart");
    CHECK(res.at(0).plan["actions"][0]["round"] == 2);
    json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
    CHECK(rec["generation"] == 2);
    CHECK(rec["slurm_job"] == 42);
    CHECK(rec["attempt"] == 1);
    // The next round, the same attempt: generation 2 runs on, nothing more is submitted.
    f.queue = job_line(41, "sia:j1:1", "FAILED") + job_line(42, "sia:j1:2", "RUNNING");
    f.calls.clear();
    res = round(1);
    CHECK(sbatches() == 0);
    CHECK(f.last("scancel") == nullptr);
    CHECK(res.at(0).plan["actions"][0]["action"] == "keep");
  }
  SECTION("generation 1 still running: checkpoint-stopped, then the next generation") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    f.on_scancel = [&f] {
      std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "75\n";
      f.queue = job_line(41, "sia:j1:1", "FAILED");
    };
    f.next_id = 42;
    f.calls.clear();
    auto res = round(1);
    const auto* sc = f.last("scancel");
    REQUIRE(sc);
    CHECK(*sc == std::vector<std::string>{"scancel", "--batch", "--signal=TERM", "41"});
    CHECK(sbatches() == 1);
    CHECK(res.at(0).plan["actions"][0]["action"] == "stop");
    CHECK(res.at(0).plan["actions"][1]["action"] == "restart");
    CHECK(json::parse(std::ifstream(f.state + "/slurm/j1.json"))["attempt"] == 1);
  }
  SECTION("the same attempt on the same placement keeps it") {
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    f.calls.clear();
    auto res = round(0);
    CHECK(sbatches() == 0);
    CHECK(f.last("scancel") == nullptr);
    CHECK(res.at(0).plan["actions"][0]["action"] == "keep");
  }
  SECTION("a record from before the field is attempt 0") {
    json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
    rec.erase("attempt");
    f.record(rec.dump());
    f.queue = job_line(41, "sia:j1:1", "RUNNING");
    f.calls.clear();
    CHECK(round(0).at(0).plan["actions"][0]["action"] == "keep");
    CHECK(sbatches() == 0);
    REQUIRE(f.last("scancel") == nullptr);
    f.on_scancel = [&f] {
      std::ofstream(f.shared + "/slurm/j1/gen-1.exit") << "75\n";
      f.queue = job_line(41, "sia:j1:1", "FAILED");
    };
    round(1);
    CHECK(f.last("scancel"));
    CHECK(sbatches() == 1);
  }
}

TEST_CASE("a generation still pending in Slurm is cancelled at once when moved", "[slurm_driver]") {
  FakeSlurm f;
  f.first_generation();
  f.queue = job_line(41, "sia:j1:1", "PENDING");
  SlurmDriver d = f.driver();
  d.observe();
  f.next_id = 42;
  f.on_scancel = [&f] { f.queue = job_line(41, "sia:j1:1", "CANCELLED"); };
  auto res = d.deliver(2, f.placement({{"t4-1", {0}}}), f.jobs_doc());
  bool term = false;
  for (const auto& c : f.calls) term = term || has(c, "--signal=TERM");
  CHECK(!term);  // Slurm signals no step of a pending job: no grace to wait out
  const auto* sc = f.last("scancel");
  REQUIRE(sc);
  CHECK(*sc == std::vector<std::string>{"scancel", "41"});
  CHECK(f.last("sbatch"));
}

TEST_CASE("a controller killed after its record but before sbatch's answer adopts the job",
          "[slurm_driver]") {
  FakeSlurm f;
  std::filesystem::create_directories(f.state + "/slurm");
  std::ofstream(f.state + "/slurm/j1.json")
      << R"({"job":"j1","generation":1,"slurm_job":0,"node":"t4-0","shape":"","stop":false,)"
      << R"("intent_at":999.5})";
  f.queue = job_line(77, "sia:j1:1", "PENDING", kSiaUid, "t4-0", 999);  // whole seconds
  SlurmDriver d = f.driver();
  auto st = d.observe();
  CHECK(st.at(0).status["jobs"][0]["state"] == "running");
  CHECK(st.at(0).status["jobs"][0]["slurm_job"] == 77);
  json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
  CHECK(rec["slurm_job"] == 77);
}

TEST_CASE("only a job submitted within the intent's sbatch is adopted, not a mark forged",
          "[slurm_driver]") {
  FakeSlurm f;
  f.now = 1100;  // past the window in which the record's sbatch could still be on its way
  f.record(R"({"job":"j1","generation":2,"slurm_job":0,"node":"t4-0","shape":"","stop":false,)"
           R"("intent_at":1000})");
  auto adopted = [&](double submitted) {
    f.queue = job_line(77, "sia:j1:2", "RUNNING", kSiaUid, "t4-0", submitted);
    SlurmDriver d = f.driver();
    auto st = d.observe();
    return !st.at(0).status["jobs"].empty() &&
           st.at(0).status["jobs"][0].value("slurm_job", 0) == 77;
  };
  // The same user's job with the next mark, submitted before the intent (the mark guessed)
  // or after sbatch's time limit (sbatch had failed): not sia's; the generation is absent.
  CHECK_FALSE(adopted(900));
  CHECK_FALSE(adopted(1000 + 60 + 4));
  CHECK(json::parse(std::ifstream(f.state + "/slurm/j1.json"))["slurm_job"] == 0);
  // Within the window: the one its sbatch submitted.
  CHECK(adopted(1000));
  CHECK(json::parse(std::ifstream(f.state + "/slurm/j1.json"))["slurm_job"] == 77);
}

TEST_CASE(
    "adoption wants the mark's secret: the same user's job with the mark but not the "
    "token, submitted within the window, is not sia's",
    "[slurm_driver]") {
  FakeSlurm f;
  f.now = 1100;
  f.record(R"({"job":"j1","generation":2,"slurm_job":0,"node":"t4-0","shape":"","stop":false,)"
           R"("intent_at":1000,"token":"k3y0fthissubmisn"})");
  // The Slurm id the record holds once the driver saw `queue`.
  auto adopted = [&](const std::string& queue) {
    f.queue = queue;
    f.driver().observe();
    return json::parse(std::ifstream(f.state + "/slurm/j1.json"))["slurm_job"].get<long>();
  };
  // Submitted within the sbatch's window, the mark guessed: without the token, or with
  // another, it is not adopted.
  CHECK(adopted(job_line(77, "sia:j1:2", "RUNNING", kSiaUid, "t4-0", 1001)) == 0);
  CHECK(adopted(job_line(77, "sia:j1:2:guessed", "RUNNING", kSiaUid, "t4-0", 1001)) == 0);
  // Both listed, the forged one of the lower id: sia's own (the token) is adopted.
  CHECK(adopted(job_line(76, "sia:j1:2", "RUNNING", kSiaUid, "t4-0", 1001) +
                job_line(78, "sia:j1:2:k3y0fthissubmisn", "RUNNING", kSiaUid, "t4-0", 1001)) == 78);
}

TEST_CASE("a record whose sbatch may still be on its way is neither resubmitted nor lost",
          "[slurm_driver]") {
  FakeSlurm f;
  std::filesystem::create_directories(f.state + "/slurm");
  std::ofstream(f.state + "/slurm/j1.json")
      << R"({"job":"j1","generation":1,"slurm_job":0,"node":"t4-0","shape":"","stop":false,)"
      << R"("intent_at":990})";
  SECTION("written 10 s ago, not listed: running, nothing submitted") {
    SlurmDriver d = f.driver();
    auto st = d.observe();
    CHECK(st.at(0).status["jobs"][0]["state"] == "running");
    d.deliver(1, f.placement({{"t4-1", {0}}}), f.jobs_doc());
    CHECK(f.last("sbatch") == nullptr);
    CHECK(f.last("scancel") == nullptr);
  }
  SECTION("past sbatch's time limit and still not listed: never submitted, submitted now") {
    f.now = 990 + 71;
    SlurmDriver d = f.driver();
    d.observe();
    auto res = d.deliver(1, f.placement({{"t4-1", {0}}}), f.jobs_doc());
    REQUIRE(f.last("sbatch"));
    json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
    CHECK(rec["generation"] == 2);
    CHECK(rec["intent_at"] == 990 + 71);
  }
}

TEST_CASE("slurmctld down: every node down with one reason, nothing submitted", "[slurm_driver]") {
  FakeSlurm f;
  f.down = true;
  SlurmDriver d = f.driver();
  auto st = d.observe();
  CHECK(!st.at(0).ok);
  CHECK(st.at(0).error.rfind("slurm: slurmctld not reachable", 0) == 0);
  CHECK(d.nodes_up().empty());
  CHECK(d.blind());  // the round decides nothing: the jobs may well run on
  auto res = d.deliver(1, f.placement({{"t4-0", {0}}}), f.jobs_doc());
  CHECK(!res.at(0).acknowledged);
  CHECK(f.last("sbatch") == nullptr);
}

TEST_CASE("another user's job with sia's mark is never adopted, signalled nor cancelled",
          "[slurm_driver]") {
  FakeSlurm f;
  std::filesystem::create_directories(f.state + "/slurm");
  std::ofstream(f.state + "/slurm/j1.json")
      << R"({"job":"j1","generation":1,"slurm_job":0,"node":"t4-0","shape":"","stop":false})";
  f.queue = job_line(77, "sia:j1:1", "RUNNING", kSiaUid + 1);
  SlurmDriver d = f.driver();
  d.observe();
  json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
  CHECK(rec["slurm_job"] == 0);  // not adopted: submitted as the next generation
  d.deliver(1, f.placement({{"t4-1", {0}}}), f.jobs_doc());
  CHECK(f.last("scancel") == nullptr);
  SECTION("a record naming another user's job id: stopping it touches nothing") {
    std::ofstream(f.state + "/slurm/j1.json")
        << R"({"job":"j1","generation":1,"slurm_job":77,"node":"t4-0","shape":"","stop":false})";
    SlurmDriver d2 = f.driver();
    d2.observe();
    d2.deliver(2, f.placement({}), f.jobs_doc());
    CHECK(f.last("scancel") == nullptr);
  }
}

TEST_CASE("nodes up: offered by Slurm with every GPU free of other users' jobs", "[slurm_driver]") {
  FakeSlurm f;
  SECTION("a GPU held by another user's job takes its node out of the round") {
    f.gpus_used(1, 1);
    f.record(R"({"job":"j1","generation":1,"slurm_job":50,"node":"t4-0","uid":1000})");
    f.queue = job_line(50, "sia:j1:1", "RUNNING", kSiaUid, "t4-0") +
              job_line(51, "other", "RUNNING", kSiaUid + 1, "t4-1");
    SlurmDriver d = f.driver();
    d.observe();
    CHECK(d.nodes_up() == std::vector<std::string>{"t4-0"});
  }
  SECTION("a drained node is not offered") {
    f.nodes =
        "NodeName=t4-0 Gres=gpu:tesla_t4:2 State=IDLE+DRAIN Partitions=gpu\n"
        "NodeName=t4-1 Gres=gpu:tesla_t4:2 State=IDLE Partitions=gpu\n";
    SlurmDriver d = f.driver();
    d.observe();
    CHECK(d.nodes_up() == std::vector<std::string>{"t4-1"});
  }
}

TEST_CASE("every generation's Slurm job is kept for history and logs, adopted ones too",
          "[slurm_driver][slurm_history]") {
  FakeSlurm f;
  {
    SlurmDriver d = f.driver();
    d.observe();
    d.deliver(1, f.placement({{"t4-0", {0}}}), f.jobs_doc());
  }
  CHECK(read_slurm_generations(f.state, "j1") == std::vector<SlurmGeneration>{{1, 41, "t4-0"}});
  f.queue = job_line(41, "sia:j1:1", "NODE_FAIL");
  f.next_id = 0;  // sbatch answers no id: the record waits to be adopted
  {
    SlurmDriver d = f.driver();
    d.observe();
    d.deliver(2, f.placement({{"t4-1", {0}}}), f.jobs_doc());
  }
  CHECK(read_slurm_generations(f.state, "j1").size() == 1);
  // Slurm lists the comment sbatch was given: the mark with the record's token.
  const std::string mark = "sia:j1:2:" + f.record_token;
  f.queue = job_line(43, mark, "RUNNING", kSiaUid, "t4-1");
  f.driver().observe();
  CHECK(read_slurm_generations(f.state, "j1") ==
        std::vector<SlurmGeneration>{{1, 41, "t4-0"}, {2, 43, "t4-1"}});
  // The current generation's record goes once the job ended; its generations stay.
  f.queue = job_line(43, mark, "COMPLETED", kSiaUid, "t4-1");
  {
    SlurmDriver d = f.driver();
    d.observe();
    d.deliver(3, f.placement({}), f.jobs_doc());
  }
  CHECK_FALSE(std::filesystem::exists(f.state + "/slurm/j1.json"));
  CHECK(read_slurm_generations(f.state, "j1").size() == 2);
}

TEST_CASE("a job the book forgot takes its record and generations with it",
          "[slurm_driver][slurm_history]") {
  FakeSlurm f;
  f.first_generation();
  record_slurm_generation(f.state, "j2", {1, 50, "t4-1"});
  REQUIRE(std::filesystem::exists(f.state + "/slurm/j1.json"));
  REQUIRE(read_slurm_generations(f.state, "j1").size() == 1);
  SlurmDriver d = f.driver();
  d.forget({"j1", "gone-before"});
  CHECK_FALSE(std::filesystem::exists(f.state + "/slurm/j1.json"));
  CHECK_FALSE(std::filesystem::exists(f.state + "/slurm/generations/j1.json"));
  CHECK(read_slurm_generations(f.state, "j2") == std::vector<SlurmGeneration>{{1, 50, "t4-1"}});
  // Forgotten, j1's Slurm job is no longer sia's (no record makes it so).
  CHECK(SlurmDriver::load_records(f.state, kSiaUid).empty());
  CHECK_FALSE(std::filesystem::exists(f.shared + "/slurm/j1"));
  CHECK(d.take_warnings().empty());
}

TEST_CASE("a forgotten job's Slurm directory goes, and no link its user planted is followed",
          "[slurm_driver][slurm_history]") {
  namespace fs = std::filesystem;
  FakeSlurm f;
  f.first_generation();
  const std::string dir = f.shared + "/slurm/j1";
  REQUIRE(fs::exists(dir + "/gen-1.sh"));
  // What the job's user must not reach: a directory of someone else's with a file.
  const std::string outside = f.dir / "outside";
  fs::create_directories(outside);
  std::ofstream(outside + "/precious") << "keep me\n";
  auto untouched = [&] {
    CHECK(fs::is_directory(fs::symlink_status(outside)));
    CHECK(exec::test::slurp(outside + "/precious") == "keep me\n");
  };
  SECTION("links inside the directory are removed themselves") {
    fs::create_directory_symlink(outside, dir + "/slurm-41.out");
    fs::create_directories(dir + "/sub");
    fs::create_symlink(outside + "/precious", dir + "/sub/gen-1.exit");
    SlurmDriver d = f.driver();
    d.forget({"j1"});
    CHECK_FALSE(fs::exists(fs::symlink_status(dir)));
    CHECK(d.take_warnings().empty());
    untouched();
  }
  SECTION("a link at SHARED/slurm/JOB is removed as a link") {
    fs::remove_all(dir);
    fs::create_directory_symlink(outside, dir);
    SlurmDriver d = f.driver();
    d.forget({"j1"});
    CHECK_FALSE(fs::exists(fs::symlink_status(dir)));
    CHECK(fs::is_directory(f.shared + "/slurm"));
    untouched();
  }
  SECTION("SHARED/slurm itself a link: refused with a warning, nothing removed through it") {
    fs::rename(f.shared + "/slurm", f.dir / "moved");
    fs::create_directories(outside + "/j1");
    std::ofstream(outside + "/j1/gen-1.sh") << "theirs\n";
    fs::create_directory_symlink(outside, f.shared + "/slurm");
    SlurmDriver d = f.driver();
    d.forget({"j1"});
    CHECK(fs::exists(outside + "/j1/gen-1.sh"));
    auto w = d.take_warnings();
    REQUIRE(w.size() == 1);
    CHECK(w[0] == "job j1: " + f.shared + "/slurm: refused: not a directory (a symbolic link?)");
    untouched();
  }
}

TEST_CASE("logs under Slurm: the rank's log from shared storage, Slurm's output named",
          "[slurm_driver][slurm_logs]") {
  FakeSlurm f;
  {
    SlurmDriver d = f.driver();
    d.observe();
    d.deliver(1, f.placement({{"t4-0", {0, 1}}, {"t4-1", {0}}}), f.jobs_doc());
  }
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {sia::ctl::test::spec("j1", 4)}));
  book.apply(sia::ctl::test::placing_round(1, 160, "j1", {{"t4-0", {0, 1}}, {"t4-1", {0}}}));
  slurm::SlurmSettings s;
  s.shared_dir = f.shared;
  exec::StateDir st(f.shared + "/nodes/t4-0");
  std::ofstream(st.rank_log("j1", 2)) << "step 1\nstep 2\n";
  // Rank 2 runs on t4-1, its log is under the first node's directory (shared storage).
  json doc = slurm_job_log(book, {}, {"j1", 2, 1, 0}, s, f.state);
  CHECK(doc["kind"] == "JobLog");
  CHECK(doc["data"]["node"] == "t4-1");
  CHECK(doc["data"]["text"] == "step 2\n");
  CHECK(doc["data"]["run_state"].is_null());
  CHECK(doc["data"]["slurm_job"] == 41);
  CHECK(doc["data"]["slurm_output"] == f.shared + "/slurm/j1/slurm-41.out");
  doc = slurm_job_log(book, {}, {"j1", 2, -1, 7}, s, f.state);
  CHECK(doc["data"]["text"] == "step 2\n");
  CHECK(doc["data"]["offset"] == 7);
  // Refusals as under agents: rank out of range, a rank without a log, a link in its place.
  CHECK(sia::test::error_of([&] {
          slurm_job_log(book, {}, {"j1", 3, -1, 0}, s, f.state);
        }).first == 64);
  CHECK(sia::test::error_of([&] {
          slurm_job_log(book, {}, {"j1", 1, -1, 0}, s, f.state);
        }).first == 66);
  std::filesystem::create_symlink("/etc/passwd", st.rank_log("j1", 1));
  CHECK(sia::test::error_of([&] {
          slurm_job_log(book, {}, {"j1", 1, -1, 0}, s, f.state);
        }).first == 77);
  CHECK_FALSE(doc["data"].contains("note"));
  // The last round found the rank's node down (slurmctld away): the log is read all the
  // same from shared storage (sia's own record says where), with a note that Slurm was not
  // asked.
  book.apply(make_node_seen("t4-1", false, "slurm: slurmctld not reachable", 200));
  doc = slurm_job_log(book, {}, {"j1", 2, -1, 0}, s, f.state);
  CHECK(doc["data"]["text"] == "step 1\nstep 2\n");
  CHECK(doc["data"]["note"] ==
        "the last round found t4-1 down (slurm: slurmctld not reachable): Slurm was not asked; "
        "read from shared storage");
  // A job placed but with no Slurm job recorded: no log yet.
  std::filesystem::remove(f.state + "/slurm/generations/j1.json");
  auto [status, message] = sia::test::error_of([&] {
    slurm_job_log(book, {}, {"j1", 0, -1, 0}, s, f.state);
  });
  CHECK(status == 66);
  CHECK(message.find("has no Slurm job recorded yet") != std::string::npos);
}

TEST_CASE("a job's user submits and cancels it; its directory and files are the user's",
          "[slurm_driver]") {
  FakeSlurm f;
  f.run_as = {{"user", "nobody"}, {"submitter", "client:alice"}, {"admin", false}};
  auto nobody = os::find_account("nobody");
  auto res = f.first_generation();
  if (::geteuid() != 0 || !nobody) {  // only root switches users: refused with the reason
    CHECK(!res.at(0).acknowledged);
    CHECK(res.at(0).error.find("not root") != std::string::npos);
    CHECK(f.last("sbatch") == nullptr);
    return;
  }
  REQUIRE(res.at(0).acknowledged);
  REQUIRE(f.last("sbatch"));
  CHECK(f.users.back() == "nobody");  // sbatch ran as nobody
  json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
  CHECK(rec["uid"] == nobody->uid);
  struct stat st {};
  REQUIRE(::lstat((f.shared + "/slurm/j1").c_str(), &st) == 0);
  CHECK(st.st_uid == nobody->uid);
  CHECK((st.st_mode & 07777) == 0700);
  REQUIRE(::lstat((f.shared + "/slurm/j1/gen-1.sh").c_str(), &st) == 0);
  CHECK(st.st_uid == nobody->uid);
  REQUIRE(::lstat((f.shared + "/slurm").c_str(), &st) == 0);
  CHECK(st.st_uid == 0);  // the parent stays root's: nobody cannot swap its directory
  REQUIRE(::lstat((f.shared + "/nodes/t4-0/jobs/j1/logs").c_str(), &st) == 0);
  CHECK(st.st_uid == nobody->uid);
  // Moved: checkpoint-stopped and cancelled as nobody, its job 41 only.
  f.queue = job_line(41, "sia:j1:1", "RUNNING", nobody->uid);
  SlurmDriver d2 = f.driver();
  d2.observe();
  f.next_id = 42;
  d2.deliver(2, f.placement({{"t4-1", {0}}}), f.jobs_doc());
  bool scancels = false;
  for (std::size_t i = 0; i < f.calls.size(); ++i) {
    if (f.calls[i][0] != "scancel") continue;
    scancels = true;
    CHECK(f.users[i] == "nobody");
    CHECK(f.calls[i].back() == "41");
  }
  CHECK(scancels);
}

TEST_CASE("a user's own job with sia's mark forged is neither sia's nor touched",
          "[slurm_driver]") {
  FakeSlurm f;
  // sia's generation 1 of j1 is Slurm job 41 of user 1000; job 60 is that same user's,
  // with sia's mark written on it, on t4-1.
  f.record(R"({"job":"j1","generation":1,"slurm_job":41,"node":"t4-0","uid":1000})");
  f.gpus_used(1, 1);
  f.queue = job_line(41, "sia:j1:1", "RUNNING", kSiaUid, "t4-0") +
            job_line(60, "sia:j1:1", "RUNNING", kSiaUid, "t4-1");
  SlurmDriver d = f.driver();
  auto st = d.observe();
  CHECK(st.at(0).status["jobs"][0]["slurm_job"] == 41);
  CHECK(d.nodes_up() == std::vector<std::string>{"t4-0"});  // job 60's GPU is not sia's
  f.next_id = 42;
  d.deliver(2, f.placement({}), f.jobs_doc());  // j1 no longer placed: stopped
  bool scancels = false;
  for (const auto& c : f.calls) {
    if (c[0] != "scancel") continue;
    scancels = true;
    CHECK(c.back() == "41");  // never 60
  }
  CHECK(scancels);
  SECTION("a record without an id adopts nothing of another uid") {
    f.record(R"({"job":"j1","generation":1,"slurm_job":0,"node":"t4-0","uid":1000})");
    f.queue = job_line(60, "sia:j1:1", "RUNNING", kSiaUid + 5, "t4-1");
    SlurmDriver d2 = f.driver();
    d2.observe();
    json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
    CHECK(rec["slurm_job"] == 0);
  }
}

TEST_CASE("the generation before, still completing, stays sia's: its node stays offered",
          "[slurm_driver]") {
  FakeSlurm f;
  // Generation 2 (job 42, pending) succeeded generation 1 (job 41), which Slurm still
  // lists completing on t4-0 with its GPUs: neither is another user's job.
  f.record(R"({"job":"j1","generation":2,"slurm_job":42,"node":"t4-0","uid":1000,)"
           R"("previous_slurm_job":41,"previous_generation":1})");
  f.gpus_used(1, 0);
  f.queue = job_line(41, "sia:j1:1", "COMPLETING", kSiaUid, "t4-0") +
            job_line(42, "sia:j1:2", "PENDING", kSiaUid, "t4-0");
  SlurmDriver d = f.driver();
  d.observe();
  CHECK(d.nodes_up() == std::vector<std::string>{"t4-0", "t4-1"});
  SECTION("through a real submission: the new record keeps the old id") {
    f.record(R"({"job":"j1","generation":1,"slurm_job":41,"node":"t4-0","uid":1000})");
    f.queue = job_line(41, "sia:j1:1", "FAILED", kSiaUid, "t4-0");
    SlurmDriver d2 = f.driver();
    d2.observe();
    f.next_id = 42;
    d2.deliver(2, f.placement({{"t4-0", {0}}}), f.jobs_doc());
    json rec = json::parse(std::ifstream(f.state + "/slurm/j1.json"));
    CHECK(rec["slurm_job"] == 42);
    CHECK(rec["generation"] == 2);
    CHECK(rec["previous_slurm_job"] == 41);
    CHECK(rec["previous_generation"] == 1);
  }
}

TEST_CASE("the exit file is read through no link and only when small", "[slurm_driver]") {
  FakeSlurm f;
  f.first_generation();
  f.queue = job_line(41, "sia:j1:1", "COMPLETED");
  const std::string exit = f.shared + "/slurm/j1/gen-1.exit";
  SECTION("a link to a file the user cannot read is refused, never followed") {
    const std::string secret = f.dir / "secret";
    std::ofstream(secret) << "7\n";
    std::filesystem::create_symlink(secret, exit);
    SlurmDriver d = f.driver();
    json j = d.observe().at(0).status["jobs"][0];
    CHECK(j["state"] == "killed");  // no exit status: not the secret's 7
    CHECK(!j.contains("exit_status"));
    auto w = d.take_warnings();
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("symbolic link") != std::string::npos);
  }
  SECTION("an exit file of more than 64 bytes is refused") {
    std::ofstream(exit) << std::string(100, ' ') << "0\n";
    SlurmDriver d = f.driver();
    json j = d.observe().at(0).status["jobs"][0];
    CHECK(j["state"] == "killed");
    auto w = d.take_warnings();
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("more than 64 bytes") != std::string::npos);
  }
  SECTION("the job's directory replaced by a link is refused") {
    std::filesystem::remove_all(f.shared + "/slurm/j1");
    std::filesystem::create_directories(f.dir / "elsewhere");
    std::ofstream((f.dir / "elsewhere") + "/gen-1.exit") << "0\n";
    std::filesystem::create_directory_symlink(f.dir / "elsewhere", f.shared + "/slurm/j1");
    SlurmDriver d = f.driver();
    json j = d.observe().at(0).status["jobs"][0];
    CHECK(j["state"] == "killed");
    CHECK(d.take_warnings().size() == 1);
  }
}

TEST_CASE("a job its user may not run is failed with the reason, never submitted",
          "[slurm_driver]") {
  FakeSlurm f;
  f.run_as = {{"user", "sia-no-such-user"}, {"submitter", "client:carol"}, {"admin", false}};
  auto res = f.first_generation();
  CHECK(!res.at(0).acknowledged);
  CHECK(f.last("sbatch") == nullptr);
  json j = f.status_of_first().at(0);
  CHECK(j["state"] == "failed");
  CHECK(j["reason"] == "node t4-0: account sia-no-such-user does not exist");
}
