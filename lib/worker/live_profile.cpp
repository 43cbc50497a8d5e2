#include "worker/live_profile.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "os/clock.hpp"
#include "worker/exit_codes.hpp"
#include "worker/subprocess.hpp"

namespace sia::worker {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 29500;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 29500;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// The last report line of a file, if any.
std::optional<json> last_report(const std::string& path) {
  std::ifstream in(path);
  std::optional<json> last;
  for (std::string line; std::getline(in, line);) {
    json j = parse_json_bounded(line);
    if (j.is_object() && j.value("type", "") == "report") last = std::move(j);
  }
  return last;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

struct Run {
  ProfilePoint point;
  std::optional<GradientStats> gradient;
};

}  // namespace

std::string default_worker_command() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path w = self.parent_path() / "sia-worker";
    if (fs::exists(w, ec)) return w.string();
  }
  return "sia-worker";
}

Profile live_profile(const LiveProfileOptions& o,
                     const std::function<void(const std::string&)>& log) {
  if (o.command.empty() || o.gpu_types.empty() || o.start_bsz < 1 || o.max_bsz < o.start_bsz ||
      o.steps < 1) {
    throw Error(ExitStatus::usage, "live profile: nothing to run");
  }
  const double start = os::now_seconds();
  const double b0 = o.init_batch_size > 0 ? o.init_batch_size : o.start_bsz;
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  if (ec) throw Error(ExitStatus::cant_create, o.work_dir + ": " + ec.message());

  // With a CPU slot one series stands for every type; on a GPU each type is measured.
  const std::vector<std::string> measured =
      o.cpu ? std::vector<std::string>{o.gpu_types.front()} : o.gpu_types;
  std::vector<Run> runs;
  for (const auto& type : measured) {
    bool any = false;
    for (long bsz = o.start_bsz; bsz <= o.max_bsz; bsz *= 2) {
      const std::string tag = (o.cpu ? std::string("cpu") : type) + "-" + std::to_string(bsz);
      const std::string report = (fs::path(o.work_dir) / (tag + ".jsonl")).string();
      const std::string log_path = (fs::path(o.work_dir) / (tag + ".log")).string();
      fs::remove(report, ec);
      Subprocess p;
      p.argv = o.command;
      p.log_path = log_path;
      p.timeout = o.timeout;
      const std::string b = std::to_string(bsz);
      p.env = {{"RANK", "0"},
               {"LOCAL_RANK", "0"},
               {"WORLD_SIZE", "1"},
               {"LOCAL_WORLD_SIZE", "1"},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", std::to_string(free_port())},
               {"SIA_JOB", o.job},
               {"SIA_ROUND", "0"},
               {"SIA_GPU_TYPE", o.cpu ? "cpu" : type},
               {"SIA_BATCH_SIZE", b},
               {"SIA_LOCAL_BSZ", b},
               {"SIA_ACCUM_STEPS", "0"},
               {"SIA_CKPT_DIR", (fs::path(o.work_dir) / (tag + ".ckpt")).string()},
               {"SIA_RESTORE", "0"},
               {"SIA_REPORT", report},
               {"SIA_REPORT_INTERVAL", "86400"},
               {"SIA_PROFILE_STEPS", std::to_string(o.steps)},
               {"SIA_INIT_BATCH_SIZE", fmt(b0)},
               {"SIA_DEVICE", o.cpu ? "cpu" : "cuda"},
               {"CUDA_VISIBLE_DEVICES", o.cpu ? "" : std::to_string(o.device)}};
      if (o.cpu && o.memory_limit_mb > 0) {
        p.env.emplace_back("SIA_MEMORY_LIMIT_MB", fmt(o.memory_limit_mb));
      }
      ExitInfo x = run_subprocess(p);
      const std::string where = (o.cpu ? std::string("cpu") : type) + ", local batch " + b;
      if (x.status == to_int(kOutOfMemory) && !x.timed_out) {
        if (!any) {
          throw Error(ExitStatus::unavailable,
                      where +
                          ": does not fit (the worker exited 71); try a smaller "
                          "--start-bsz. Log: " +
                          log_path);
        }
        log(where + ": out of memory; stopping at " + std::to_string(bsz / 2));
        break;
      }
      if (x.timed_out || x.status != 0) {
        std::string tail = tail_of_file(log_path, 5);
        while (!tail.empty() && tail.back() == '\n') tail.pop_back();
        throw Error(ExitStatus::unavailable,
                    where + ": the worker " +
                        (x.timed_out ? "timed out after " + fmt(o.timeout) + " s"
                                     : "exited with status " + std::to_string(x.status)) +
                        " (log " + log_path + ")" + (tail.empty() ? "" : "\n" + tail));
      }
      auto r = last_report(report);
      if (!r || !r->contains("step_time") || !r->contains("sync_time") ||
          !(*r)["step_time"].is_number() || (*r)["step_time"].get<double>() <= 0) {
        throw Error(ExitStatus::unavailable,
                    where + ": the worker reported no step_time (report file " + report + ")");
      }
      Run run;
      run.point.gpu_type = type;
      run.point.local_bsz = static_cast<int>(bsz);
      run.point.step_time = (*r)["step_time"].get<double>();
      run.point.sync_time = std::min((*r)["sync_time"].get<double>(), 0.5 * run.point.step_time);
      if (r->contains("grad_sqr") && r->contains("grad_var")) {
        run.gradient =
            GradientStats{(*r)["grad_sqr"].get<double>(), (*r)["grad_var"].get<double>()};
      }
      runs.push_back(run);
      any = true;
      log(where + ": step " + fmt(run.point.step_time) + " s (" + fmt(x.seconds) +
          " s to measure)");
    }
  }

  Profile prof;
  prof.job = o.job;
  prof.model = o.model;
  for (const auto& type : o.gpu_types) {
    for (const auto& r : runs) {
      if (o.cpu || r.point.gpu_type == type) {
        ProfilePoint pt = r.point;
        pt.gpu_type = type;
        prof.points.push_back(pt);
      }
    }
  }
  GradientStats mean;
  int n = 0;
  for (const auto& r : runs) {
    if (!r.gradient) continue;
    mean.sqr += std::max(r.gradient->sqr, 0.0);
    mean.var += std::max(r.gradient->var, 0.0);
    ++n;
  }
  if (n > 0) {
    mean.sqr /= n;
    mean.var /= n;
    prof.gradient = mean;
  }
  prof.cost_seconds = os::now_seconds() - start;
  return prof;
}

}  // namespace sia::worker
