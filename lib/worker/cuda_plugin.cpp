#include "worker/cuda_plugin.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/error.hpp"

#ifndef SIA_WORKER_PLUGIN_DIR
#define SIA_WORKER_PLUGIN_DIR ""
#endif

namespace sia::worker {

namespace {

namespace fs = std::filesystem;

struct Plugin {
  CudaDeviceCountFn device_count = nullptr;
  CudaCreateFn create = nullptr;
  std::string path;
  std::string why;  // when not loaded
};

std::string exe_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

Plugin load() {
  Plugin p;
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("SIA_WORKER_CUDA_PLUGIN"); e && *e) {
    candidates.push_back(e);
  } else {
    std::string dir = exe_dir();
    if (!dir.empty()) {
      candidates.push_back(dir + "/" + kCudaPluginFile);
      candidates.push_back(dir + "/../lib/sia/" + kCudaPluginFile);
    }
    if (*SIA_WORKER_PLUGIN_DIR) {
      candidates.push_back(std::string(SIA_WORKER_PLUGIN_DIR) + "/" + kCudaPluginFile);
    }
    candidates.push_back(kCudaPluginFile);  // the dynamic loader's search path
  }
  std::string errors;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (c.find('/') != std::string::npos && !fs::exists(c, ec)) continue;
    void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      errors += std::string(errors.empty() ? "" : "; ") + ::dlerror();
      continue;
    }
    p.device_count = reinterpret_cast<CudaDeviceCountFn>(::dlsym(h, kCudaDeviceCountSymbol));
    p.create = reinterpret_cast<CudaCreateFn>(::dlsym(h, kCudaCreateSymbol));
    if (!p.device_count || !p.create) {
      errors += "; " + c + ": not a version 1 sia-worker CUDA plugin";
      p = Plugin{};
      continue;  // the handle stays open: harmless
    }
    p.path = c;
    return p;
  }
  p.why = "the CUDA backend (" + std::string(kCudaPluginFile) + ") is not available" +
          (errors.empty() ? std::string(": this build has no CUDA support") : ": " + errors);
  return p;
}

const Plugin& plugin() {
  static std::once_flag once;
  static Plugin p;
  std::call_once(once, [] { p = load(); });
  return p;
}

}  // namespace

int cuda_device_count(std::string* why) {
  const Plugin& p = plugin();
  if (!p.device_count) {
    if (why) *why = p.why;
    return 0;
  }
  char buf[512] = {0};
  int n = p.device_count(buf, sizeof buf);
  if (n < 0) {
    if (why) *why = std::string("no CUDA device: ") + buf;
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device is visible";
  return n;
}

std::unique_ptr<Backend> make_cuda_backend(const CudaBackendConfig& config, Communicator& comm) {
  const Plugin& p = plugin();
  if (!p.create) throw Error(ExitStatus::unavailable, p.why);
  return std::unique_ptr<Backend>(p.create(&config, &comm));
}

std::string cuda_plugin_path() {
  return plugin().path;
}

}  // namespace sia::worker
