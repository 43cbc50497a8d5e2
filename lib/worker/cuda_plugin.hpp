// The optional CUDA + NCCL backend lives in a plugin, libsia_worker_cuda.so, built only
// when the CUDA toolkit, nvcc and NCCL are found; sia-worker loads it at run time, so the
// same binary runs on machines without CUDA libraries. This header is both the loader's
// interface and the plugin's ABI (version 1, extern "C" entry points; the plugin is built
// with the same compiler and headers as libsia, so C++ objects and sia::Error cross it).
// The plugin is looked for at $SIA_WORKER_CUDA_PLUGIN, beside the executable, in
// ../lib/sia beside it (the build tree), in the installed <libdir>/sia, then by the
// dynamic loader's search.
// Thread-safety: loading happens once, guarded; the functions may be called from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "worker/backend.hpp"
#include "worker/comm.hpp"
#include "worker/mlp.hpp"

namespace sia::worker {

struct CudaBackendConfig {
  MlpShape shape;
  int max_batch = 0;  // largest micro-batch
  int local_rank = 0;
  int local_world_size = 1;
};

// Plugin ABI. device_count returns the number of visible devices, or -1 and a reason.
// create returns a backend that owns an NCCL communicator over comm's ranks (rank 0's
// ncclUniqueId travels by comm.broadcast); it throws sia::Error (71 out of memory, 69 no
// device or NCCL failure).
using CudaDeviceCountFn = int (*)(char* why, std::size_t why_len);
using CudaCreateFn = Backend* (*)(const CudaBackendConfig* config, Communicator* comm);
inline constexpr const char* kCudaDeviceCountSymbol = "sia_worker_cuda_device_count_v1";
inline constexpr const char* kCudaCreateSymbol = "sia_worker_cuda_create_v1";
inline constexpr const char* kCudaPluginFile = "libsia_worker_cuda.so";

// Visible CUDA devices; 0 when there are none or the plugin is missing (`why` says why).
int cuda_device_count(std::string* why = nullptr);
// A CUDA backend; Error(69) when the plugin or a device is missing.
std::unique_ptr<Backend> make_cuda_backend(const CudaBackendConfig& config, Communicator& comm);
// Where the plugin was loaded from ("" if it was not).
std::string cuda_plugin_path();

}  // namespace sia::worker
