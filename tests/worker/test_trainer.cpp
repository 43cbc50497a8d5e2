#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fork_ranks.hpp"
#include "worker/checkpoint.hpp"
#include "worker/exit_codes.hpp"
#include "worker/stop_signal.hpp"
#include "worker/trainer.hpp"

using namespace sia;
using namespace sia::worker;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/sia-train-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

TrainOptions small_options() {
  TrainOptions o;
  o.data.size = 512;
  o.data.features = 8;
  o.data.classes = 3;
  o.shape = MlpShape{8, 16, 1, 3};
  o.device = "cpu";
  o.max_steps = 30;
  o.init_batch_size = 16;
  return o;
}

WorkerEnv env_for(int rank, int world, int local, int accum, int port, const fs::path& dir) {
  WorkerEnv e;
  e.rank = rank;
  e.local_rank = rank;
  e.world_size = world;
  e.local_world_size = world;
  e.master_port = port;
  e.job = "t";
  e.batch = sia::batch_of(local, world, accum);
  e.ckpt_dir = (dir / "ck").string();
  e.report = (dir / "reports.jsonl").string();
  e.rendezvous_timeout = 20;
  e.peer_timeout = 20;
  return e;
}

// Trains in `world` processes; rank `stop_rank` asks to stop after `stop_after` seconds.
std::vector<int> run(int world, int local, int accum, const fs::path& dir, const TrainOptions& o,
                     int stop_rank = -1, double stop_after = 0) {
  const int port = test::free_port();
  return test::fork_ranks(world, [&](int rank) {
    if (rank == stop_rank) {
      std::thread([stop_after] {
        std::this_thread::sleep_for(std::chrono::duration<double>(stop_after));
        request_stop();
      }).detach();
    }
    return train(env_for(rank, world, local, accum, port, dir), o, [](const std::string&) {});
  });
}

std::vector<nlohmann::json> reports(const fs::path& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir / "reports.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("training does not depend on how the batch is split", "[worker][trainer]") {
  TempDir a, b, c;
  const TrainOptions o = small_options();
  CHECK(run(2, 8, 0, a.path, o) == std::vector<int>{0, 0});  // 2 ranks x 8
  CHECK(run(1, 16, 0, b.path, o) == std::vector<int>{0});    // 1 rank x 16
  CHECK(run(1, 4, 3, c.path, o) == std::vector<int>{0});     // 1 rank x 4 x 4 micro-steps
  auto sa = load_checkpoint((a.path / "ck").string());
  auto sb = load_checkpoint((b.path / "ck").string());
  auto sc = load_checkpoint((c.path / "ck").string());
  REQUIRE((sa && sb && sc));
  CHECK(sa->step == 30);
  CHECK(sb->samples == sa->samples);
  CHECK(sc->samples == sa->samples);
  double diff_b = 0, diff_c = 0;
  for (std::size_t i = 0; i < sa->model.params.size(); ++i) {
    diff_b = std::max(diff_b, std::abs(double(sa->model.params[i]) - sb->model.params[i]));
    diff_c = std::max(diff_c, std::abs(double(sa->model.params[i]) - sc->model.params[i]));
  }
  CHECK(diff_b < 1e-4);
  CHECK(diff_c < 1e-4);
  // Reports: rank 0 only, at the end, with the contract's fields.
  auto r = reports(a.path);
  REQUIRE(r.size() == 1);
  CHECK(r[0]["type"] == "report");
  CHECK(r[0]["reason"] == "done");
  CHECK(r[0]["step"] == 30);
  CHECK(r[0]["world_size"] == 2);
  CHECK(r[0]["local_bsz"] == 8);
  for (const char* k : {"job", "round", "epoch", "progress", "loss", "step_time", "sync_time",
                        "accum_steps", "grad_sqr", "grad_var"}) {
    INFO(k);
    CHECK(r[0].contains(k));
  }
  CHECK(r[0]["sync_time"].get<double>() < r[0]["step_time"].get<double>());
}

TEST_CASE("a stop request on one rank stops every rank after the same step", "[worker][trainer]") {
  TempDir d;
  TrainOptions o = small_options();
  o.max_steps = 100000000;
  auto st = run(3, 4, 0, d.path, o, /*stop_rank=*/2, /*stop_after=*/0.5);
  CHECK(st == std::vector<int>(3, to_int(kPreempted)));
  auto s = load_checkpoint((d.path / "ck").string());
  REQUIRE(s);
  CHECK(s->step > 0);
  CHECK(s->samples == s->step * 12);
  auto last = reports(d.path).back();
  CHECK(last["reason"] == "preempted");
  CHECK(last["step"] == s->step);
}

TEST_CASE("a profiling run measures and exits; a batch too large exits 71", "[worker][trainer]") {
  TempDir d;
  TrainOptions o = small_options();
  const int port = test::free_port();
  auto st = test::fork_ranks(1, [&](int) {
    WorkerEnv e = env_for(0, 1, 32, 0, port, d.path);
    e.ckpt_dir.clear();
    e.profile_steps = 3;
    return train(e, o, [](const std::string&) {});
  });
  CHECK(st == std::vector<int>{0});
  auto r = reports(d.path);
  REQUIRE(r.size() == 1);
  CHECK(r[0]["reason"] == "profile");
  CHECK(r[0]["step"] == 5);  // 2 warm-up steps + 3 measured
  CHECK(r[0]["step_time"].get<double>() > 0);
  o.memory_limit_mb = 0.01;
  st = test::fork_ranks(1, [&](int) {
    WorkerEnv e = env_for(0, 1, 4096, 0, port, d.path);
    e.profile_steps = 3;
    return train(e, o, [](const std::string&) {});
  });
  CHECK(st == std::vector<int>{to_int(kOutOfMemory)});
}

TEST_CASE("a rank whose batch does not fit takes every rank down with status 71",
          "[worker][trainer]") {
  TempDir d;
  const TrainOptions o = small_options();
  const int port = test::free_port();
  auto st = test::fork_ranks(3, [&](int rank) {
    WorkerEnv e = env_for(rank, 3, 64, 0, port, d.path);
    if (rank == 1) e.memory_limit_mb = 0.01;
    return train(e, o, [](const std::string&) {});
  });
  CHECK(st == std::vector<int>(3, to_int(kOutOfMemory)));
}

TEST_CASE("a batch plan changes the batch in place, at one step on every rank",
          "[worker][trainer][batch_plan]") {
  TempDir d;
  TrainOptions o = small_options();
  o.max_steps = 40;
  // Plan 1 of this generation (round 0): 2 ranks x 4 x 3 micro-steps = 24 per step.
  {
    std::ofstream plan(d.path / "plan.json");
    plan << R"({"type":"batch_plan","job":"t","round":0,"plan":1,"batch_size":24,)"
         << R"("local_bsz":4,"accum_steps":2})";
  }
  const int port = test::free_port();
  auto st = test::fork_ranks(2, [&](int rank) {
    WorkerEnv e = env_for(rank, 2, 8, 0, port, d.path);  // starts at 2 x 8 = 16
    e.batch_plan = (d.path / "plan.json").string();
    return train(e, o, [](const std::string&) {});
  });
  CHECK(st == std::vector<int>{0, 0});
  auto s = load_checkpoint((d.path / "ck").string());
  REQUIRE(s);
  CHECK(s->step == 40);
  // The first step ran at 16 (the plan is read at its end), every later one at 24.
  CHECK(s->samples == 16 + 39 * 24);
  auto r = reports(d.path);
  REQUIRE(r.size() >= 2);
  auto batch =
      std::find_if(r.begin(), r.end(), [](const auto& x) { return x["reason"] == "batch"; });
  REQUIRE(batch != r.end());
  CHECK((*batch)["plan"] == 1);
  CHECK((*batch)["local_bsz"] == 4);
  CHECK((*batch)["accum_steps"] == 2);
  CHECK((*batch)["batch_size"] == 24);
  CHECK_FALSE(batch->contains("step_time"));  // no timing of the new batch yet
  CHECK(r.back()["reason"] == "done");
  CHECK(r.back()["local_bsz"] == 4);
  CHECK(r.back()["plan"] == 1);
}
