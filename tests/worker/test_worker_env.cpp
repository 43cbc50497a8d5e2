#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "test_util.hpp"
#include "worker/worker_env.hpp"

using namespace sia;
using namespace sia::worker;

static Getenv env_of(std::map<std::string, std::string> m) {
  return [m = std::move(m)](const char* name) -> const char* {
    auto it = m.find(name);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

TEST_CASE("the worker environment with what sia-run sets", "[worker][env]") {
  WorkerEnv e = read_worker_env(env_of({{"RANK", "2"},
                                        {"LOCAL_RANK", "0"},
                                        {"WORLD_SIZE", "4"},
                                        {"LOCAL_WORLD_SIZE", "2"},
                                        {"MASTER_ADDR", "node-a"},
                                        {"MASTER_PORT", "29500"},
                                        {"SIA_JOB", "j1"},
                                        {"SIA_ROUND", "7"},
                                        {"SIA_GPU_TYPE", "a100"},
                                        {"SIA_BATCH_SIZE", "256"},
                                        {"SIA_LOCAL_BSZ", "32"},
                                        {"SIA_ACCUM_STEPS", "1"},
                                        {"SIA_CKPT_DIR", "/ck"},
                                        {"SIA_RESTORE", "1"},
                                        {"SIA_REPORT", "tcp://ctl:5555"},
                                        {"SIA_REPORT_INTERVAL", "2.5"}}));
  CHECK(e.rank == 2);
  CHECK(e.world_size == 4);
  CHECK(e.nodes() == 2);
  CHECK(e.master_addr == "node-a");
  CHECK(e.master_port == 29500);
  CHECK(e.round == 7);
  CHECK(e.batch.global == 256);
  CHECK(e.micro_steps() == 2);
  CHECK(e.restore);
  CHECK(e.report_interval == 2.5);
  CHECK(e.warnings.empty());
}

TEST_CASE("defaults for a worker run by hand", "[worker][env]") {
  WorkerEnv e = read_worker_env(env_of({{"SIA_CKPT_DIR", "/ck"}}));
  CHECK(e.world_size == 1);
  CHECK(e.rank == 0);
  CHECK(e.batch.local == 32);
  CHECK(e.batch.global == 32);
  CHECK(e.report.empty());
  CHECK(e.report_interval == 30);
  // The local batch follows from the global one.
  e = read_worker_env(env_of({{"SIA_CKPT_DIR", "/c"},
                              {"WORLD_SIZE", "2"},
                              {"RANK", "1"},
                              {"MASTER_PORT", "1"},
                              {"SIA_BATCH_SIZE", "64"}}));
  CHECK(e.batch.local == 32);
  // A profiling run needs no checkpoint directory.
  e = read_worker_env(env_of({{"SIA_PROFILE_STEPS", "5"}, {"SIA_LOCAL_BSZ", "8"}}));
  CHECK(e.profile_steps == 5);
  CHECK(e.batch.global == 8);
}

TEST_CASE("an inconsistent global batch is resolved with a warning", "[worker][env]") {
  WorkerEnv e = read_worker_env(
      env_of({{"SIA_CKPT_DIR", "/c"}, {"SIA_BATCH_SIZE", "100"}, {"SIA_LOCAL_BSZ", "32"}}));
  CHECK(e.batch.global == 32);
  REQUIRE(e.warnings.size() == 1);
  CHECK(e.warnings[0].find("training with 32") != std::string::npos);
  // A scheduler may write a fractional batch size: the local batch decides.
  e = read_worker_env(
      env_of({{"SIA_CKPT_DIR", "/c"}, {"SIA_BATCH_SIZE", "100.5"}, {"SIA_LOCAL_BSZ", "25"}}));
  CHECK(e.batch.global == 25);
  CHECK(e.warnings.size() == 1);
  e = read_worker_env(env_of({{"SIA_CKPT_DIR", "/c"}, {"SIA_BATCH_SIZE", "64.0"}}));
  CHECK(e.batch.local == 64);
  CHECK(e.warnings.empty());
}

TEST_CASE("environment errors name the variable and exit 78", "[worker][env]") {
  auto err = [](std::map<std::string, std::string> m) {
    return test::error_of([&] { read_worker_env(env_of(m)); });
  };
  CHECK(err({{"SIA_CKPT_DIR", "/c"}, {"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "9"}}) ==
        std::make_pair(78, std::string("RANK: expected an integer in [0, WORLD_SIZE), got '2'")));
  CHECK(err({{"SIA_CKPT_DIR", "/c"}, {"WORLD_SIZE", "2"}}).second ==
        "MASTER_PORT: missing (needed when WORLD_SIZE > 1)");
  CHECK(err({{"SIA_CKPT_DIR", "/c"}, {"SIA_BATCH_SIZE", "100.5"}}).second ==
        "SIA_BATCH_SIZE: 100.5 is not a multiple of WORLD_SIZE * (SIA_ACCUM_STEPS + 1) = 1 "
        "(set SIA_LOCAL_BSZ)");
  CHECK(err({{"SIA_CKPT_DIR", "/c"}, {"SIA_LOCAL_BSZ", "x"}}).second ==
        "SIA_LOCAL_BSZ: expected a positive integer, got 'x'");
  CHECK(err({{"SIA_CKPT_DIR", "/c"}, {"SIA_RESTORE", "yes"}}).second ==
        "SIA_RESTORE: expected 0 or 1, got 'yes'");
  CHECK(err({}).first == 78);
  CHECK(err({{"SIA_CKPT_DIR", "/c"},
             {"SIA_BATCH_SIZE", "63"},
             {"WORLD_SIZE", "2"},
             {"MASTER_PORT", "9"}})
            .first == 78);
  CHECK(err({{"SIA_CKPT_DIR", "/c"}, {"SIA_REPORT_INTERVAL", "0"}}).first == 78);
}

TEST_CASE("a batch whose product overflows is refused naming the variable", "[worker][env]") {
  auto [status, message] = test::error_of([] {
    read_worker_env(env_of({{"WORLD_SIZE", "65536"},
                            {"MASTER_PORT", "1"},
                            {"SIA_LOCAL_BSZ", "1073741824"},
                            {"SIA_ACCUM_STEPS", "1048576"}}));
  });
  CHECK(status == 78);
  CHECK(message ==
        "SIA_LOCAL_BSZ: 1073741824 x WORLD_SIZE x (SIA_ACCUM_STEPS + 1) exceeds 1099511627776 "
        "samples");
}
