#include "worker/worker_env.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"

namespace sia::worker {

namespace {

[[noreturn]] void bad(const char* name, const std::string& value, const std::string& what) {
  throw Error(ExitStatus::config,
              std::string(name) + ": expected " + what + ", got '" + value + "'");
}

std::optional<std::string> text(const Getenv& get, const char* name) {
  const char* v = get(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

long integer(const Getenv& get, const char* name, long fallback, long lo, long hi,
             const std::string& what) {
  auto v = text(get, name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  long x = std::strtol(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0' || x < lo || x > hi) bad(name, *v, what);
  return x;
}

// Bounded above too: durations become std::chrono deadlines, batches ints.
double number(const Getenv& get, const char* name, double fallback, double lo, double hi,
              const std::string& what) {
  auto v = text(get, name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  if (errno != 0 || end == v->c_str() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi) {
    bad(name, *v, what);
  }
  return x;
}

}  // namespace

WorkerEnv read_worker_env(const Getenv& get) {
  constexpr long kMaxInt = 1L << 30;
  WorkerEnv e;
  e.world_size = static_cast<int>(integer(get, "WORLD_SIZE", 1, 1, 65536, "a positive integer"));
  e.rank = static_cast<int>(
      integer(get, "RANK", 0, 0, e.world_size - 1, "an integer in [0, WORLD_SIZE)"));
  e.local_world_size = static_cast<int>(integer(get, "LOCAL_WORLD_SIZE", e.world_size, 1,
                                                e.world_size, "an integer in [1, WORLD_SIZE]"));
  e.local_rank =
      static_cast<int>(integer(get, "LOCAL_RANK", e.rank % e.local_world_size, 0,
                               e.local_world_size - 1, "an integer in [0, LOCAL_WORLD_SIZE)"));
  if (auto v = text(get, "MASTER_ADDR")) e.master_addr = *v;
  e.master_port = static_cast<int>(integer(get, "MASTER_PORT", 0, 1, 65535, "a TCP port"));
  if (e.world_size > 1 && e.master_port == 0) {
    throw Error(ExitStatus::config, "MASTER_PORT: missing (needed when WORLD_SIZE > 1)");
  }
  if (auto v = text(get, "SIA_JOB")) e.job = *v;
  e.round = integer(get, "SIA_ROUND", 0, 0, kMaxInt * 1024, "a non-negative integer");
  if (auto v = text(get, "SIA_GPU_TYPE")) e.gpu_type = *v;
  e.batch.accum_steps = static_cast<int>(
      integer(get, "SIA_ACCUM_STEPS", 0, 0, kMaxAccumSteps, "a non-negative integer"));
  // A scheduler's batch size is a number; what trains is local_bsz x ranks x micro-steps.
  const double batch = number(get, "SIA_BATCH_SIZE", 0, 1, 1e9, "a number from 1 to 1e9");
  const long per_local = static_cast<long>(e.world_size) * e.micro_steps();
  e.batch.local =
      static_cast<int>(integer(get, "SIA_LOCAL_BSZ", 0, 1, kMaxInt, "a positive integer"));
  if (e.batch.local == 0) {
    if (batch == 0) {
      e.batch.local = 32;
    } else if (batch > kMaxInt || std::fmod(batch, static_cast<double>(per_local)) != 0) {
      throw Error(ExitStatus::config,
                  "SIA_BATCH_SIZE: " + *text(get, "SIA_BATCH_SIZE") +
                      " is not a multiple of WORLD_SIZE * (SIA_ACCUM_STEPS + 1) = " +
                      std::to_string(per_local) + " (set SIA_LOCAL_BSZ)");
    } else {
      e.batch.local = static_cast<int>(batch / static_cast<double>(per_local));
    }
  }
  // The invariant, once: what trains is the product (never a wrapped one).
  const auto trained = batch_product(e.batch.local, e.world_size, e.batch.accum_steps);
  if (!trained) {
    throw Error(ExitStatus::config, "SIA_LOCAL_BSZ: " + std::to_string(e.batch.local) +
                                        " x WORLD_SIZE x (SIA_ACCUM_STEPS + 1) exceeds " +
                                        std::to_string(kMaxGlobalBatch) + " samples");
  }
  const std::int64_t product = *trained;
  if (batch != 0 && batch != static_cast<double>(product)) {
    e.warnings.push_back("SIA_BATCH_SIZE " + *text(get, "SIA_BATCH_SIZE") +
                         " differs from SIA_LOCAL_BSZ * WORLD_SIZE * (SIA_ACCUM_STEPS + 1) = " +
                         std::to_string(product) + "; training with " + std::to_string(product));
  }
  e.batch.global = product;
  if (auto v = text(get, "SIA_CKPT_DIR")) e.ckpt_dir = *v;
  e.restore = integer(get, "SIA_RESTORE", 0, 0, 1, "0 or 1") == 1;
  if (auto v = text(get, "SIA_REPORT")) e.report = *v;
  if (auto v = text(get, "SIA_BATCH_PLAN")) e.batch_plan = *v;
  e.report_interval = number(get, "SIA_REPORT_INTERVAL", 30, 0.001, 86400,
                             "a number of seconds from 0.001 to 86400");
  e.profile_steps =
      static_cast<int>(integer(get, "SIA_PROFILE_STEPS", 0, 0, 1 << 20, "a non-negative integer"));
  e.init_batch_size = number(get, "SIA_INIT_BATCH_SIZE", 0, 0, 1e9, "a number from 0 to 1e9");
  e.stop_fraction = number(get, "SIA_STOP_FRACTION", 0, 0, 1, "a number from 0 to 1");
  if (auto v = text(get, "SIA_DEVICE")) {
    if (*v != "auto" && *v != "cpu" && *v != "cuda") bad("SIA_DEVICE", *v, "auto, cpu or cuda");
    e.device = *v;
  }
  e.memory_limit_mb = number(get, "SIA_MEMORY_LIMIT_MB", 0, 0, 1e12, "a number from 0 to 1e12");
  e.rendezvous_timeout = number(get, "SIA_RENDEZVOUS_TIMEOUT", 300, 0.001, 1e6,
                                "a number of seconds from 0.001 to 1e6");
  e.peer_timeout =
      number(get, "SIA_PEER_TIMEOUT", 600, 0.001, 1e6, "a number of seconds from 0.001 to 1e6");
  if (e.ckpt_dir.empty() && e.profile_steps == 0) {
    throw Error(ExitStatus::config,
                "SIA_CKPT_DIR: missing (where rank 0 checkpoints on SIGTERM; only "
                "SIA_PROFILE_STEPS runs need none)");
  }
  if (e.restore && e.ckpt_dir.empty()) {
    throw Error(ExitStatus::config, "SIA_RESTORE=1 needs SIA_CKPT_DIR");
  }
  return e;
}

WorkerEnv read_worker_env() {
  return read_worker_env([](const char* name) { return std::getenv(name); });
}

}  // namespace sia::worker
