#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "ctl/admission.hpp"
#include "ctl/client_backend.hpp"
#include "ctl/round_engine.hpp"
#include "ctl_test_util.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;

namespace {

// Two nodes of two T4s; cifar10 (the catalog's) takes about 18 minutes on all four at
// best, about 35 on two.
Cluster four_t4() {
  return parse_cluster(Node(nlohmann::json::parse(R"({"name": "p", "node_groups": [
      {"gpu_type": "t4", "gpus_per_node": 2, "count": 2}]})"),
                            "cluster.json", ""));
}

JobSpec guaranteed(const std::string& name, double deadline) {
  JobSpec s;
  s.name = name;
  s.model = "cifar10";
  s.max_gpus = 2;
  s.job_class = JobClass::guaranteed;
  s.deadline = deadline;
  return s;
}

constexpr double kNow = 1.8e9;

}  // namespace

TEST_CASE("the controller admits guaranteed jobs on what the admitted ones leave", "[deadline]") {
  Catalog catalog(sia::test::catalog_dir());
  const Cluster cluster = four_t4();
  Estimator est(cluster, catalog);
  const AdmissionScene scene{cluster, est, kNow, 0.1, {}};
  Submission s{{guaranteed("a", kNow + 3600), guaranteed("b", kNow + 3600)}, {}};
  auto plans = admit_guaranteed(s, {}, scene);
  REQUIRE(plans.size() == 2);
  for (const auto& p : plans) {
    REQUIRE(p.plan.admitted);
    CHECK(p.plan.config->gpus == 2);  // the fewest that meet the hour
    CHECK(p.plan.finish <= kNow + 3600);
  }
  // A third: a and b (waiting in the inbox) hold all four GPUs.
  PendingRequest pending{"submit", "local:x", kNow, {"a", "b"}, {}, s.jobs};
  auto admitted = admitted_jobs(JobBook{}, {pending}, scene);
  REQUIRE(admitted.size() == 2);
  CHECK(admitted[0].held);
  Submission third{{guaranteed("c", kNow + 3600)}, {}};
  auto [status, line] = sia::test::error_of([&] { admit_guaranteed(third, admitted, scene); });
  CHECK(status == 65);
  CHECK(line.rfind("c: deadline: ", 0) == 0);
  CHECK(line.find("the guaranteed jobs admitted before it hold the GPUs it could use; it "
                  "could finish by ") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  // --or-best-effort: submitted best-effort, no plan.
  third.or_best_effort = true;
  CHECK(admit_guaranteed(third, admitted, scene).empty());
  CHECK(third.jobs[0].job_class == JobClass::best_effort);
  // Alone, a deadline of a minute: out of reach on the whole cluster.
  Submission soon{{guaranteed("d", kNow + 60)}, {}};
  auto [status2, line2] = sia::test::error_of([&] { admit_guaranteed(soon, {}, scene); });
  CHECK(status2 == 65);
  CHECK(line2.find("on the GPUs the guaranteed jobs admitted before it leave it could "
                   "finish by ") != std::string::npos);
  // Best-effort jobs ask nothing.
  Submission be{{guaranteed("e", kNow + 60)}, {}};
  be.jobs[0].job_class = JobClass::best_effort;
  CHECK(admit_guaranteed(be, {}, scene).empty());
}

TEST_CASE("a round's re-check reaches the book, status and explain", "[deadline]") {
  JobBook book;
  JobSpec g = guaranteed("g", kNow + 3600);
  book.apply(make_submit("f", "local:me", kNow, {g}));
  nlohmann::json placement = {
      {"jobs",
       {{{"name", "g"}, {"gpu_type", "t4"}, {"nodes", {{{"name", "t4-0"}, {"gpus", {0, 1}}}}}}}}};
  auto round = [&](bool at_risk, double finish) {
    return make_round(book.round() + 1, kNow + 60, nullptr, nullptr, placement,
                      nlohmann::json::object(), nullptr,
                      {{"g", {{"finish", finish}, {"at_risk", at_risk}}}});
  };
  book.apply(round(false, kNow + 3000));
  const BookJob* b = book.find("g");
  REQUIRE(b->projected_finish);
  CHECK(*b->projected_finish == kNow + 3000);
  CHECK_FALSE(b->at_risk);
  auto expl = job_explanation(book, {}, "g", kNow + 60, 120, 3);
  CHECK(expl.dump().find("on schedule: deadline ") != std::string::npos);
  book.apply(round(true, kNow + 4000));
  auto status = job_status_list(book, {}, {"g"}, kNow + 120, 1e9)["data"]["jobs"][0];
  CHECK(status["at_risk"] == true);
  CHECK(status["class"] == "guaranteed");
  CHECK(status["projected_finish"] == kNow + 4000);
  CHECK(status["reason_code"] == "at_risk");
  CHECK(status["reason"].get<std::string>().rfind("at risk: deadline ", 0) == 0);
  // It survives a snapshot.
  const JobBook copy = JobBook::from_json(book.to_json(), "snapshot.json");
  CHECK(copy.find("g")->at_risk);
  CHECK(*copy.find("g")->projected_finish == kNow + 4000);
}

TEST_CASE("guaranteed submissions at once are admitted one after the other", "[deadline]") {
  // Three local clients submit at once, each a job that needs two of the four GPUs by its
  // deadline: two are admitted and queued, the third is refused and leaves nothing.
  ctl::test::RoundFixture f;
  const double deadline = wall_clock() + 3600;
  std::vector<std::pair<int, std::string>> outcome(3);
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back([&, i] {
      JobSpec s = ctl::test::spec("g" + std::to_string(i));
      s.job_class = JobClass::guaranteed;
      s.deadline = deadline;
      LocalBackend client(f.config, "local:client" + std::to_string(i));
      outcome[i] = sia::test::error_of([&] { client.submit(std::vector<JobSpec>{s}); });
    });
  }
  for (auto& c : clients) c.join();
  const auto admitted =
      std::count_if(outcome.begin(), outcome.end(), [](const auto& o) { return o.first == 0; });
  CHECK(admitted == 2);
  for (const auto& [status, line] : outcome) {
    if (status == 0) continue;
    CHECK(status == 65);
    CHECK(line.find(": deadline: ") != std::string::npos);
    CHECK(line.find('\n') == std::string::npos);
  }
  CHECK(f.store.inbox_files().size() == 2);  // the refused one queued nothing
  const auto pending = pending_requests(f.store);
  std::size_t guaranteed = 0;
  for (const auto& p : pending) guaranteed += p.guaranteed.size();
  CHECK(guaranteed == 2);
}

TEST_CASE("a refused guaranteed submission leaves no state directory behind", "[deadline]") {
  ctl::test::TempDir dir;
  const std::string cluster = ctl::test::write_cluster(dir);
  const Settings config = ctl::test::test_config(dir / "state", cluster);
  JobSpec s = ctl::test::spec("soon");
  s.job_class = JobClass::guaranteed;
  s.deadline = wall_clock() + 60;  // out of reach on four T4s
  LocalBackend client(config, "local:me");
  CHECK(sia::test::error_of([&] { client.submit(std::vector<JobSpec>{s}); }).first == 65);
  CHECK_FALSE(std::filesystem::exists(dir / "state"));
}

TEST_CASE("admission counts the GPUs reservations hold before the deadline", "[deadline]") {
  Catalog catalog(sia::test::catalog_dir());
  const Cluster cluster = four_t4();
  Estimator est(cluster, catalog);
  // Reservations hold two of the four T4s before the deadlines: a takes the other two, b
  // is refused and the line says what the reservations hold.
  const AdmissionScene scene{cluster, est, kNow, 0.1, {{"t4", 2}}};
  Submission s{{guaranteed("a", kNow + 3600)}, {}};
  auto plans = admit_guaranteed(s, {}, scene);
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].plan.config->gpus == 2);
  s.jobs.push_back(guaranteed("b", kNow + 3600));
  s.jobs.erase(s.jobs.begin());
  std::vector<deadline::GuaranteedJob> admitted;
  JobState a;
  a.spec = guaranteed("a", kNow + 3600);
  a.path = "a";
  admitted.push_back(admission_question(a, scene, true));
  auto [status, line] = sia::test::error_of([&] { admit_guaranteed(s, admitted, scene); });
  CHECK(status == 65);
  CHECK(line.find("; reservations hold 2 of its 4 t4 GPUs before then (--or-best-effort") !=
        std::string::npos);
}

TEST_CASE("a submission's admission reads controller.reservations over [now, deadline]",
          "[deadline]") {
  ctl::test::TempDir dir;
  const std::string cluster = ctl::test::write_cluster(dir);  // two nodes of two T4s
  const double now = wall_clock();
  auto config_with = [&](double at) {
    ctl::test::write_text(dir / "reservations.toml",
                          "[[reservation]]\ngpu_type = \"t4\"\ngpus = 2\nsteps = [{at = " +
                              std::to_string(static_cast<long long>(at)) + ", gpus = 2}]\n");
    return ctl::test::test_config(dir / "state", cluster,
                                  {{"controller.reservations", dir / "reservations.toml"}});
  };
  Catalog catalog(sia::test::catalog_dir());
  auto admit = [&](const Settings& config, std::vector<JobSpec> jobs) {
    Submission s{std::move(jobs), {}};
    return sia::test::error_of(
        [&] { admit_submission(s, JobBook{}, {}, config, catalog, "", now); });
  };
  // A node reserved from half an hour on, within both deadlines: the two jobs that need
  // two T4s each for the hour cannot both be admitted.
  const Settings soon = config_with(now + 1800);
  auto [status, line] = admit(soon, {guaranteed("a", now + 3600), guaranteed("b", now + 3600)});
  CHECK(status == 65);
  CHECK(line.rfind("b: deadline: ", 0) == 0);
  CHECK(line.find("reservations hold 2 of its 4 t4 GPUs before then") != std::string::npos);
  // Reserved only after the deadlines: both fit.
  CHECK(admit(config_with(now + 7200), {guaranteed("a", now + 3600), guaranteed("b", now + 3600)})
            .first == 0);
  // A bad reservations file is the configuration's error (78).
  ctl::test::write_text(dir / "reservations.toml", "[[reservation]]\ngpu_type = \"v100\"\n");
  const Settings bad = ctl::test::test_config(
      dir / "state", cluster, {{"controller.reservations", dir / "reservations.toml"}});
  auto [bad_status, bad_line] = admit(bad, {guaranteed("a", now + 3600)});
  CHECK(bad_status == 78);
  CHECK(bad_line.find("reservations.toml") != std::string::npos);
}
