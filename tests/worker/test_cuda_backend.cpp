// The CUDA + NCCL worker backend (the libsia_worker_cuda.so plugin). Not a Catch2 program:
// it exits 77 (ctest: skipped) where no GPU is visible, after checking that the plugin
// loads and refuses cleanly with status 69. With a GPU it checks the backend against the
// CPU one on the same micro-batches, that training lowers the loss, and, with two GPUs, an
// NCCL all-reduce between two processes.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fork_ranks.hpp"
#include "worker/cpu_backend.hpp"
#include "worker/cuda_plugin.hpp"
#include "worker/dataset.hpp"
#include "worker/tcp_comm.hpp"

using namespace sia;
using namespace sia::worker;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

bool close(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max({1e-6, std::abs(a), std::abs(b)});
}

std::unique_ptr<TcpComm> solo() {
  TcpCommConfig c;
  c.job = "cuda-test";
  return TcpComm::connect(c);
}

void compare_with_cpu() {
  const MlpShape shape{32, 64, 2, 10};
  DatasetConfig dc;
  SyntheticDataset data(dc);
  const int n = 64;
  auto comm = solo();
  auto gpu = make_cuda_backend(CudaBackendConfig{shape, n, 0, 1}, *comm);
  CpuBackend cpu(shape, *comm, n, 0);
  std::printf("backend: %s (plugin %s)\n", gpu->describe().c_str(), cuda_plugin_path().c_str());
  ModelState s{init_params(shape, 1), std::vector<float>(shape.param_count(), 0.0f)};
  gpu->set_state(s);
  cpu.set_state(s);
  std::vector<float> x(static_cast<std::size_t>(n) * 32);
  std::vector<std::int32_t> y(n);
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 200; ++step) {
    data.gather(static_cast<std::uint64_t>(step) * n, n, x.data(), y.data());
    MicroResult g = gpu->micro_step(x.data(), y.data(), n);
    if (step < 3) {
      MicroResult c = cpu.micro_step(x.data(), y.data(), n);
      expect(close(g.loss, c.loss, 1e-4),
             "loss agrees with the CPU backend (step " + std::to_string(step) + ")");
      expect(close(g.grad_sqr, c.grad_sqr, 1e-3), "|g|^2 agrees with the CPU backend");
      double sc[1] = {1}, sg[1] = {1};
      cpu.sync(sc, 1);
      gpu->sync(sg, 1);
      expect(sg[0] == 1, "scalars survive a one-rank all-reduce");
      UpdateResult uc = cpu.update(1, 0.05, 0.9, true);
      UpdateResult ug = gpu->update(1, 0.05, 0.9, true);
      expect(close(uc.total_sqr, ug.total_sqr, 1e-3) && uc.paired == ug.paired &&
                 close(uc.pair_sqr, ug.pair_sqr, 1e-3),
             "update figures agree");
      ModelState a = cpu.state(), b = gpu->state();
      double diff = 0;
      for (std::size_t i = 0; i < a.params.size(); ++i) {
        diff = std::max(diff, std::abs(double(a.params[i]) - b.params[i]));
      }
      expect(diff < 1e-4, "parameters agree after the update");
    } else {
      double sg[1] = {0};
      gpu->sync(sg, 1);
      gpu->update(1, 0.05, 0.9, false);
    }
    if (step == 0) first_loss = g.loss;
    last_loss = g.loss;
  }
  expect(last_loss < 0.7 * first_loss, "training lowers the loss (" + std::to_string(first_loss) +
                                           " -> " + std::to_string(last_loss) + ")");
}

void two_ranks() {
  const int port = test::free_port();
  auto st = test::fork_ranks(2, [&](int rank) {
    TcpCommConfig c;
    c.rank = rank;
    c.world_size = 2;
    c.master_port = port;
    c.job = "cuda-test";
    c.rendezvous_timeout = 60;
    auto comm = TcpComm::connect(c);
    const MlpShape shape{8, 8, 1, 3};
    auto gpu = make_cuda_backend(CudaBackendConfig{shape, 4, rank, 2}, *comm);
    double s[2] = {rank + 1.0, 10.0};
    gpu->sync(s, 2);
    return s[0] == 3 && s[1] == 20 ? 0 : 1;
  });
  expect(st == std::vector<int>({0, 0}), "NCCL all-reduce across two processes");
}

}  // namespace

int main() {
  std::string why;
  const int devices = cuda_device_count(&why);
  if (devices <= 0) {
    if (cuda_plugin_path().empty()) {
      std::printf("FAILED: the plugin was built but does not load: %s\n", why.c_str());
      return 1;
    }
    try {
      auto comm = solo();
      make_cuda_backend(CudaBackendConfig{MlpShape{}, 8, 0, 1}, *comm);
      std::printf("FAILED: a backend without a device\n");
      return 1;
    } catch (const Error& e) {
      if (e.status() != ExitStatus::unavailable) {
        std::printf("FAILED: status %d without a device: %s\n", to_int(e.status()), e.what());
        return 1;
      }
      std::printf("ok: without a device the plugin refuses with 69 (%s)\n", e.what());
    }
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  std::printf("%d CUDA device(s)\n", devices);
  try {
    compare_with_cpu();
    if (devices >= 2) two_ranks();
  } catch (const Error& e) {
    std::printf("FAILED: %s (status %d)\n", e.what(), to_int(e.status()));
    return 1;
  }
  return failures ? 1 : 0;
}
