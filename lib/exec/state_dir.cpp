#include "exec/state_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/job_spec.hpp"
#include "os/atomic_file.hpp"
#include "os/make_dirs.hpp"

namespace sia::exec {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const json kMeta = {{"generator", "sia-run"}};

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::optional<Document> read_if_present(const std::string& path, const std::string& kind) {
  if (!file_exists(path)) return std::nullopt;
  return read_document(path, {kind});
}

}  // namespace

StateDir::StateDir(const std::string& root, AliveFn alive)
    : root_(fs::absolute(root).lexically_normal().string()), alive_(std::move(alive)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string StateDir::job_dir(const std::string& job) const {
  return root_ + "/jobs/" + job;
}
std::string StateDir::rank_log(const std::string& job, int rank) const {
  return job_dir(job) + "/logs/rank-" + std::to_string(rank) + ".log";
}
std::string StateDir::report_path(const std::string& job) const {
  return job_dir(job) + "/reports.jsonl";
}
std::string StateDir::supervisor_log(const std::string& job) const {
  return job_dir(job) + "/supervisor.log";
}
std::string StateDir::batch_plan_path(const std::string& job) const {
  return job_dir(job) + "/batch-plan.json";
}
std::string StateDir::ckpt_dir(const std::string& job, const std::string& ckpt_root) const {
  if (ckpt_root.empty()) return job_dir(job) + "/ckpt";
  return fs::absolute(ckpt_root).lexically_normal().string() + "/" + job;
}

bool StateDir::exists() const {
  return file_exists(root_);
}

// ROOT, ROOT/jobs and ROOT/jobs/JOB: a job's account passes through them to its own files
// (SIA_REPORT, SIA_BATCH_PLAN, its logs and checkpoints) but lists and reads nothing else.
void StateDir::create() const {
  os::make_dirs(root_ + "/jobs", os::kTraverseDir);
}

void StateDir::bind_node(const std::string& node) {
  create();
  std::string path = root_ + "/node";
  if (file_exists(path)) {
    std::string recorded = bound_node();
    if (!recorded.empty() && recorded != node) {
      throw Error(ExitStatus::config, "state directory " + root_ + " serves node \"" + recorded +
                                          "\", not \"" + node +
                                          "\" (give each node its own --state-dir)");
    }
    if (!recorded.empty()) return;
  }
  os::write_file_atomic(path, node + "\n");
}

std::string StateDir::bound_node() const {
  std::ifstream in(root_ + "/node");
  std::string node;
  std::getline(in, node);
  return node;
}

StateLock StateDir::lock() {
  create();
  os::LockAttempt a = os::try_lock_file(root_ + "/lock", std::to_string(::getpid()));
  if (a.lock) return std::move(*a.lock);
  throw Error(ExitStatus::temp_fail, "state directory " + root_ + " is in use by another sia-run" +
                                         (a.holder.empty() ? "" : " (pid " + a.holder + ")") +
                                         "; try again later");
}

std::vector<std::string> StateDir::jobs() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(root_ + "/jobs", ec), end; !ec && it != end; it.increment(ec)) {
    if (file_exists(it->path().string() + "/launch.json")) {
      out.push_back(it->path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

JobRecord StateDir::record(const std::string& job) const {
  JobRecord r;
  r.job = job;
  r.launch = read_launch(job);
  r.held = held(job);
  r.status.job = job;
  if (!r.launch) {
    r.status.state = RunState::killed;
    return r;
  }
  auto current = [&]() -> std::optional<JobStatus> {
    auto s = read_status(job);
    if (s && s->generation == r.launch->generation) return s;
    return std::nullopt;
  };
  auto s = current();
  if (s && !is_final(s->state) && !alive_(s->supervisor)) {
    s = current();  // it may have written its last word just before it exited
    if (s && !is_final(s->state)) {
      s->state = RunState::killed;
      s->reason = "its supervisor (pid " + std::to_string(s->supervisor.pid) + ") is gone";
    }
  }
  if (!s) {
    s = JobStatus{};
    s->job = job;
    s->generation = r.launch->generation;
    s->state = RunState::killed;
    s->reason = "no supervisor recorded round " + std::to_string(r.launch->generation);
  }
  r.status = std::move(*s);
  return r;
}

std::vector<JobRecord> StateDir::records() const {
  std::vector<JobRecord> out;
  for (const auto& j : jobs()) out.push_back(record(j));
  return out;
}

void StateDir::write_launch(const JobLaunch& launch) {
  os::make_dirs(job_dir(launch.job), os::kTraverseDir);
  os::make_dirs(job_dir(launch.job) + "/logs");  // private; the job's account's (run_as.hpp)
  os::write_file_atomic(job_dir(launch.job) + "/launch.json",
                        dump_document("RunLaunch", kMeta, job_launch_to_json(launch), true) + "\n");
}

std::optional<JobLaunch> StateDir::read_launch(const std::string& job) const {
  auto d = read_if_present(job_dir(job) + "/launch.json", "RunLaunch");
  if (!d) return std::nullopt;
  return parse_job_launch(d->data());
}

void StateDir::write_status(const JobStatus& status) {
  os::write_file_atomic(
      job_dir(status.job) + "/status.json",
      dump_document("RunJobStatus", kMeta, job_status_to_json(status), true) + "\n");
}

std::optional<JobStatus> StateDir::read_status(const std::string& job) const {
  auto d = read_if_present(job_dir(job) + "/status.json", "RunJobStatus");
  if (!d) return std::nullopt;
  return parse_job_status(d->data());
}

void StateDir::write_stop(const std::string& job, const StopRequest& r) {
  json data = {{"generation", r.generation}, {"grace", r.grace}, {"reason", r.reason}};
  os::write_file_atomic(job_dir(job) + "/stop.json",
                        dump_document("RunStopRequest", kMeta, data, true) + "\n");
}

std::optional<StopRequest> StateDir::read_stop(const std::string& job) const {
  auto d = read_if_present(job_dir(job) + "/stop.json", "RunStopRequest");
  if (!d) return std::nullopt;
  Node n = d->data();
  StopRequest r;
  r.generation = n.at("generation").non_negative_int32();
  r.grace = n.at("grace").non_negative_number();
  r.reason = n.string_or("reason", "");
  return r;
}

void StateDir::set_held(const std::string& job, bool held) {
  std::string path = job_dir(job) + "/held";
  if (held) {
    os::write_file_atomic(path, "stopped by sia-run stop\n");
  } else if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw Error(ExitStatus::io, path + ": cannot remove: " + std::strerror(errno));
  }
}

bool StateDir::held(const std::string& job) const {
  return file_exists(job_dir(job) + "/held");
}

std::string default_state_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (auto s = env("SIA_STATE_DIR"); !s.empty()) return s;
  if (auto s = env("XDG_STATE_HOME"); !s.empty()) return s + "/sia/run";
  if (auto s = env("HOME"); !s.empty()) return s + "/.local/state/sia/run";
  throw Error(ExitStatus::config,
              "no state directory: give --state-dir, or set SIA_STATE_DIR or HOME");
}

}  // namespace sia::exec
