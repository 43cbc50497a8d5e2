#include "channel/sia_run_node.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/tool.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "exec/report_lines.hpp"
#include "exec/run_documents.hpp"
#include "os/atomic_file.hpp"
#include "os/make_dirs.hpp"

namespace sia::channel {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string absolute(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

// The last line of a file that says something, for an error message.
std::string last_line(const std::string& file) {
  std::string text;
  try {
    text = read_input(file);
  } catch (const Error&) {
    return "";
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  auto nl = text.rfind('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  if (line.size() > 500) line = line.substr(0, 497) + "...";
  return line;
}

bool is_empty_jobs(const json& jobs) {
  if (!jobs.is_object() || jobs.empty()) return true;
  auto d = jobs.find("data");
  if (d == jobs.end() || !d->is_object()) return false;  // let sia-run say what is wrong
  auto j = d->find("jobs");
  return j != d->end() && j->is_array() && j->empty();
}

// Starts `sia-run apply` (argv) with standard input from /dev/null, standard output and error
// to the given files, in a process group of its own (a terminal's ^C reaches the agent
// only). It is not stopped when the agent goes away: it finishes what it began. Status 69
// when it cannot be started (missing, not executable).
os::Process start_apply(const std::vector<std::string>& argv, const std::string& out,
                        const std::string& err) {
  if (::access(argv.at(0).c_str(), X_OK) != 0) {
    throw Error(ExitStatus::unavailable, "cannot run " + argv[0] + ": " + std::strerror(errno));
  }
  os::SpawnOptions o;
  o.argv = argv;
  o.search_path = false;
  o.out = os::Stream::truncate(out);
  o.err = os::Stream::truncate(err);
  o.group = os::Group::own;
  o.default_signals = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};
  o.blocked_signals = std::vector<int>{};
  os::Process p;
  try {
    p = os::spawn(o);
  } catch (const Error& e) {
    throw Error(ExitStatus::unavailable, "cannot run " + argv[0] + ": " + e.what());
  }
  if (p.exec_errno() != 0) {
    p.wait();
    throw Error(ExitStatus::unavailable,
                "cannot run " + argv[0] + ": " + std::strerror(p.exec_errno()));
  }
  return p;
}

}  // namespace

SiaRunNode::SiaRunNode(SiaRunNodeOptions options)
    : opt_(std::move(options)),
      state_(absolute(opt_.state_dir.empty() ? exec::default_state_dir() : opt_.state_dir)) {
  if (opt_.sia_run.empty()) {
    opt_.sia_run = (fs::path(os::self_executable()).parent_path() / "sia-run").string();
  }
  if (!opt_.cluster.empty()) opt_.cluster = absolute(opt_.cluster);
  work_dir_ = state_.root() + "/agent";
  state_.create();
  os::make_dirs(work_dir_);  // private: the job lists it keeps hold commands and users
}

json SiaRunNode::empty_placement() {
  return {{"apiVersion", "sia/v1"},
          {"kind", "Placement"},
          {"metadata", {{"generator", "sia-run agent"}}},
          {"data",
           {{"cluster_name", ""},
            {"jobs", json::array()},
            {"evicted", json::array()},
            {"waiting", json::array()}}}};
}

void SiaRunNode::begin_apply(const json& placement, const json& jobs) {
  start(Op::apply, placement, jobs);
}

void SiaRunNode::start(Op op, const json& placement, const json& jobs) {
  if (busy()) throw Error(ExitStatus::software, "SiaRunNode: an operation is running");
  op_ = op;
  tries_ = 0;
  const std::string pfile = work_dir_ + "/placement.json";
  const std::string jfile = work_dir_ + "/jobs.json";
  argv_ = {opt_.sia_run, "--state-dir", state_.root(), "-q", "apply", "--node", opt_.node};
  if (!opt_.cluster.empty()) {
    argv_.push_back("--cluster");
    argv_.push_back(opt_.cluster);
  }
  try {
    os::write_file_atomic(pfile,
                          placement.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
    if (!is_empty_jobs(jobs)) {
      os::write_file_atomic(jfile,
                            jobs.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
      argv_.push_back("--jobs");
      argv_.push_back(jfile);
    }
  } catch (const Error& e) {
    outcome_ = Outcome{op, false, to_int(e.status()), nullptr, e.what()};
    return;
  }
  argv_.insert(argv_.end(), opt_.apply_args.begin(), opt_.apply_args.end());
  argv_.push_back("-o");
  argv_.push_back("json");
  argv_.push_back(pfile);
  spawn();
}

void SiaRunNode::begin_stop_all(const std::string& reason) {
  if (busy()) throw Error(ExitStatus::software, "SiaRunNode: an operation is running");
  bool live = false;
  if (state_.exists()) {
    for (const auto& r : state_.records()) live = live || r.live();
  }
  if (!live) {
    outcome_ = Outcome{Op::stop, true, 0, nullptr, ""};
    return;
  }
  if (opt_.log) opt_.log("checkpoint-stopping every job: " + reason);
  start(Op::stop, empty_placement(), json::object());
}

void SiaRunNode::spawn() {
  ++tries_;
  retry_waiting_ = false;
  try {
    child_ = start_apply(argv_, work_dir_ + "/apply.out", work_dir_ + "/apply.err");
  } catch (const Error& e) {
    child_.reset();
    outcome_ = Outcome{op_, false, to_int(e.status()), nullptr, e.what()};
  }
}

void SiaRunNode::finish(int status) {
  child_.reset();
  if (status == to_int(ExitStatus::temp_fail) && tries_ <= opt_.lock_retries) {
    retry_waiting_ = true;
    retry_at_ = os::system_clock().now() + std::chrono::seconds(1);
    if (opt_.log) opt_.log("sia-run apply: " + last_line(work_dir_ + "/apply.err") + "; retrying");
    return;
  }
  Outcome o;
  o.op = op_;
  o.exit_status = status;
  o.ok = status == 0;
  if (o.ok) {
    json doc = parse_json_bounded(read_input(work_dir_ + "/apply.out"));
    if (doc.is_object() && doc.contains("data")) {
      o.plan = doc["data"];
    } else {
      o.ok = false;
      o.exit_status = to_int(ExitStatus::software);
      o.error = "sia-run apply printed no RunPlan";
    }
  } else {
    o.error = last_line(work_dir_ + "/apply.err");
    if (o.error.empty()) o.error = "sia-run apply exited " + std::to_string(status);
  }
  outcome_ = std::move(o);
}

bool SiaRunNode::busy() {
  if (child_) {
    if (auto exit = child_->poll()) finish(exit->status());
  }
  if (retry_waiting_ && os::system_clock().now() >= retry_at_) spawn();
  return child_.has_value() || retry_waiting_;
}

std::optional<NodeBackend::Outcome> SiaRunNode::take_outcome() {
  (void)busy();
  std::optional<Outcome> out;
  out.swap(outcome_);
  return out;
}

json SiaRunNode::run_status() {
  try {
    std::vector<exec::JobRecord> records;
    if (state_.exists()) records = state_.records();
    std::string node = state_.exists() ? state_.bound_node() : "";
    return exec::status_to_json(node.empty() ? opt_.node : node, state_, records);
  } catch (const Error& e) {
    if (opt_.log && warned_.insert(e.what()).second) opt_.log(e.what());
    return {{"node", opt_.node}, {"state_dir", state_.root()}, {"jobs", json::array()}};
  }
}

std::vector<ReportLine> SiaRunNode::read_reports(const Offsets& from, std::size_t max_bytes_per_job,
                                                 Offsets& next) {
  exec::ReportReadOptions ro;
  ro.after = from;
  ro.max_bytes_per_job = max_bytes_per_job;
  std::vector<std::string> warnings;
  std::vector<exec::ReportLineRecord> records;
  try {
    records = exec::read_report_lines(state_, ro, &warnings);
  } catch (const Error& e) {
    warnings.push_back(e.what());
  }
  for (const auto& w : warnings) {
    if (opt_.log && warned_.insert(w).second) opt_.log(w);
  }
  std::vector<ReportLine> out;
  out.reserve(records.size());
  for (auto& r : records) {
    std::int64_t& n = next[r.job];
    n = std::max(n, r.next);
    out.push_back(ReportLine{r.job, r.offset, std::move(r.line)});
  }
  return out;
}

Offsets SiaRunNode::report_ends() {
  Offsets out;
  std::error_code ec;
  for (fs::directory_iterator it(state_.root() + "/jobs", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string job = it->path().filename().string();
    if (!valid_job_name(job)) continue;
    std::error_code ec2;
    auto size = fs::file_size(state_.report_path(job), ec2);
    if (!ec2) out[job] = static_cast<std::int64_t>(size);
  }
  return out;
}

}  // namespace sia::channel
