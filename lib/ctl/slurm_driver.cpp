#include "ctl/slurm_driver.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "ctl/pipe_process.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/slurm_batch.hpp"
#include "exec/executor.hpp"
#include "exec/node_plan.hpp"
#include "exec/process_exit.hpp"
#include "exec/report_lines.hpp"
#include "model/job_state.hpp"
#include "os/atomic_file.hpp"
#include "os/clock.hpp"
#include "slurm/job_mark.hpp"
#include "slurm/slurm_cluster.hpp"

namespace sia::ctl {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kCommandTimeout = 60;  // seconds for sbatch or scancel
// Seconds past an sbatch's time limit after which a job it submitted is in Slurm's list.
constexpr double kListedWithin = 10;

std::string small_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Slurm job states in which the job may still run or hold its nodes.
bool live_state(const std::string& s) {
  static const std::set<std::string> live = {
      "PENDING",  "CONFIGURING", "RUNNING",   "COMPLETING",   "SUSPENDED",   "REQUEUED",
      "RESIZING", "SIGNALING",   "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"};
  return live.count(s) > 0;
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

std::string why(const slurm::CommandResult& r) {
  if (!r.ran) return r.err;
  std::string l = last_line(r.err);
  return (l.empty() ? std::string() : l + " ") + "(exit status " + std::to_string(r.status) + ")";
}

std::string shape_of(const std::vector<exec::JobLaunch>& launches) {
  std::string s = launches.front().gpu_type;
  for (const auto& l : launches) s += " " + l.node + ":" + std::to_string(l.ranks.size());
  for (const auto& a : launches.front().command) s += " " + a;
  return s;
}

}  // namespace

SlurmDriver::SlurmDriver(Cluster cluster, slurm::SlurmSettings settings, SlurmDriverOptions options,
                         std::unique_ptr<slurm::CommandRunner> runner,
                         std::function<ReportOffsets()> offsets)
    : cluster_(std::move(cluster)),
      settings_(std::move(settings)),
      options_(std::move(options)),
      runner_(std::move(runner)),
      offsets_(std::move(offsets)) {
  if (!options_.sleep) {
    options_.sleep = [](double s) {
      std::this_thread::sleep_for(std::chrono::duration<double>(s));
    };
  }
  if (options_.sia_uid < 0) options_.sia_uid = static_cast<long>(::geteuid());
  if (!options_.now) options_.now = wall_clock;
}

std::string SlurmDriver::record_path(const std::string& job) const {
  return options_.state_dir + "/slurm/" + job + ".json";
}

std::string SlurmDriver::job_dir(const std::string& job) const {
  return settings_.shared_dir + "/slurm/" + job;
}

std::optional<SlurmDriver::Record> SlurmDriver::load(const std::string& job) const {
  json j = parse_json_bounded(small_file(record_path(job)));
  if (!j.is_object()) return std::nullopt;
  Record r;
  r.job = job;
  r.generation = j.value("generation", 0L);
  r.slurm_id = j.value("slurm_job", 0L);
  r.node = j.value("node", "");
  r.shape = j.value("shape", "");
  r.stop = j.value("stop", false);
  r.intent_at = j.value("intent_at", 0.0);
  return r;
}

void SlurmDriver::save(const Record& r) const {
  fs::create_directories(options_.state_dir + "/slurm");
  json j = {{"job", r.job},
            {"generation", r.generation},
            {"slurm_job", r.slurm_id},
            {"node", r.node},
            {"shape", r.shape},
            {"stop", r.stop},
            {"intent_at", r.intent_at}};
  os::write_file_atomic(record_path(r.job), j.dump() + "\n");
}

std::vector<std::string> SlurmDriver::take_warnings() {
  return std::exchange(warnings_, {});
}

// The Slurm job of the record's generation, when Slurm lists it as sia's (marked with the
// record's mark, run as sia's user); the lowest id of a heterogeneous job's components.
const slurm::SlurmJob* SlurmDriver::own_job(const Record& rec) const {
  const slurm::JobMark mark{rec.job, rec.generation};
  const slurm::SlurmJob* found = nullptr;
  for (const auto& j : slurm_jobs_) {
    if (!slurm::is_sia_job(j, options_.sia_uid)) continue;
    if (slurm::parse_mark_comment(j.comment) != mark) continue;
    const long id = std::atol(j.id.c_str());
    if (rec.slurm_id != 0 && id != rec.slurm_id) continue;
    if (!found || id < std::atol(found->id.c_str())) found = &j;
  }
  return found;
}

SlurmDriver::Seen SlurmDriver::classify(Record& rec) {
  Seen s;
  const slurm::SlurmJob* job = own_job(rec);
  if (rec.slurm_id == 0) {  // killed between the record and sbatch's answer: adopt it
    if (!job && options_.now() - rec.intent_at < kCommandTimeout + kListedWithin) {
      s.live = true;  // its sbatch may still be on its way: neither resubmitted nor ended
      s.status = {{"name", rec.job},
                  {"round", rec.generation},
                  {"state", "running"},
                  {"reason", "submitted, not yet listed by Slurm"}};
      return s;
    }
    if (!job) {
      s.absent = true;
      return s;
    }
    rec.slurm_id = std::atol(job->id.c_str());
    save(rec);
  }
  const std::string state = job ? job->state : "";
  json j = {{"name", rec.job}, {"round", rec.generation}, {"slurm_job", rec.slurm_id}};
  const std::string id = "Slurm job " + std::to_string(rec.slurm_id);
  if (live_state(state)) {
    s.live = true;
    j["state"] = rec.stop ? "stopping" : "running";
    j["reason"] = id + " " + state;
    s.status = j;
    return s;
  }
  // Cancelled by someone else: its script may still have written a status (Slurm's
  // TERM before the KILL is a stop to it), but the cancel is what ended it.
  const int code = exit_code(rec);
  if (state == "CANCELLED" && !rec.stop && code != 0) {
    j["state"] = "failed";
    j["cancelled"] = true;
    j["reason"] = id + " was cancelled in Slurm (scancel)";
  } else if (code >= 0) {
    j["exit_status"] = code;
    j["state"] = code == 0 ? "finished" : code == 75 ? "preempted" : "failed";
    j["reason"] = id + ": the ranks exited " + std::to_string(code);
  } else {
    j["state"] = "killed";
    j["reason"] = id + " ended " + (state.empty() ? "(no longer known to Slurm)" : state) +
                  " without its ranks' exit status";
  }
  s.status = j;
  return s;
}

// Slurm's nodes and jobs, once: the usable GPUs per node and the jobs' states.
void SlurmDriver::read_slurm() {
  slurm_jobs_.clear();
  usable_.clear();
  try {
    const auto nodes = slurm::read_nodes(*runner_);
    slurm_jobs_ = slurm::read_jobs(*runner_);
    usable_ = slurm::usable_gpus(nodes, slurm_jobs_, settings_, options_.sia_uid);
    reachable_ = true;
    unreachable_.clear();
  } catch (const Error& e) {
    reachable_ = false;
    unreachable_ = e.what();
    slurm_jobs_.clear();
    usable_.clear();
  }
}

std::vector<NodeStatus> SlurmDriver::observe() {
  observed_ = true;
  records_.clear();
  seen_.clear();
  std::vector<NodeStatus> out;
  read_slurm();
  std::map<std::string, json> jobs_of;
  if (reachable_ && fs::is_directory(options_.state_dir + "/slurm")) {
    for (const auto& e : fs::directory_iterator(options_.state_dir + "/slurm")) {
      if (e.path().extension() != ".json") continue;
      auto rec = load(e.path().stem().string());
      if (!rec) continue;
      Seen s = classify(*rec);
      if (!s.absent) jobs_of[rec->node].push_back(s.status);
      records_[rec->job] = *rec;
      seen_[rec->job] = s;
    }
  }
  for (const auto& n : cluster_.nodes) {
    NodeStatus s;
    s.node = n.name;
    s.ok = reachable_;
    s.error = unreachable_;
    if (reachable_) {
      s.status = {{"node", n.name},
                  {"jobs", jobs_of.count(n.name) ? jobs_of[n.name] : json::array()}};
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> SlurmDriver::nodes_up() {
  if (!observed_) observe();
  std::vector<std::string> up;
  for (const auto& n : cluster_.nodes) {  // offered by Slurm, every GPU sia's to use
    auto it = usable_.find(n.name);
    if (reachable_ && it != usable_.end() && it->second >= n.gpus) up.push_back(n.name);
  }
  return up;
}

std::vector<ReportLine> SlurmDriver::drain_reports() {
  if (!observed_) observe();
  const ReportOffsets offsets = offsets_ ? offsets_() : ReportOffsets{};
  std::vector<ReportLine> out;
  for (const auto& n : cluster_.nodes) {
    exec::StateDir st(settings_.shared_dir + "/nodes/" + n.name);
    if (!st.exists()) continue;
    exec::ReportReadOptions opt;
    for (auto it = offsets.lower_bound({n.name, ""});
         it != offsets.end() && it->first.first == n.name; ++it) {
      opt.after[it->first.second] = it->second;
    }
    try {
      for (const auto& l : exec::read_report_lines(st, opt, &warnings_)) {
        out.push_back({n.name, l.job, l.offset, l.line, l.next});
      }
    } catch (const std::exception& e) {  // one node's files: that node's warning
      warnings_.push_back("node " + n.name + ": reports: " + e.what());
    }
  }
  return out;
}

// Checkpoint-stop: SIGTERM to every job's batch script, which forwards it to the ranks (a
// job still pending is cancelled at once: no rank started, no checkpoint to make), then up
// to the grace period for all to end, then scancel of those still there. Returns the jobs
// whose generation is confirmed ended in Slurm as a stop allows a successor: checkpoint-
// stopped (its script wrote 75), or cancelled before it started.
std::set<std::string> SlurmDriver::stop_all(const std::vector<Record*>& jobs) {
  std::vector<Record*> left;
  std::set<std::string> unstarted;
  for (Record* r : jobs) {
    r->stop = true;
    save(*r);
    const slurm::SlurmJob* j = own_job(*r);
    if (!j) continue;  // not (or no longer) sia's in Slurm's list: nothing to stop
    left.push_back(r);
    if (j->state == "PENDING") {
      unstarted.insert(r->job);
      auto c = runner_->run({"scancel", std::to_string(r->slurm_id)}, kCommandTimeout);
      if (!c.ran || c.status != 0) warnings_.push_back("job " + r->job + ": scancel: " + why(c));
      continue;
    }
    auto c = runner_->run({"scancel", "--batch", "--signal=TERM", std::to_string(r->slurm_id)},
                          kCommandTimeout);
    if (!c.ran || c.status != 0)
      warnings_.push_back("job " + r->job + ": scancel --batch --signal=TERM: " + why(c));
  }
  for (double waited = 0; !left.empty(); waited += 0.5) {
    if (waited > 0) read_slurm();
    std::vector<Record*> still;
    for (Record* r : left) {
      const slurm::SlurmJob* j = own_job(*r);
      if (!reachable_ || (j && live_state(j->state))) still.push_back(r);
    }
    left = std::move(still);
    if (left.empty() || waited >= settings_.grace_seconds) break;
    options_.sleep(0.5);
  }
  std::set<std::string> ended;
  for (Record* r : jobs) {
    if (std::find(left.begin(), left.end(), r) != left.end()) continue;
    if (!reachable_ || r->slurm_id == 0) continue;
    const int code = exit_code(*r);
    if (code == exec::kPreemptedExit || (code < 0 && unstarted.count(r->job))) {
      ended.insert(r->job);
    } else {
      warnings_.push_back(
          "job " + r->job + ": generation " + std::to_string(r->generation) + " ended " +
          (code < 0 ? "without its ranks' exit status" : "with status " + std::to_string(code)) +
          " as it was stopped: the next round decides what follows");
    }
  }
  for (Record* r : left) {
    warnings_.push_back("job " + r->job + ": generation " + std::to_string(r->generation) +
                        " not ended after the " + seconds_text(settings_.grace_seconds) +
                        " s grace: scancel; no next generation before Slurm says it ended");
    if (reachable_ && !own_job(*r)) continue;
    auto c = runner_->run({"scancel", std::to_string(r->slurm_id)}, kCommandTimeout);
    if (!c.ran || c.status != 0) warnings_.push_back("job " + r->job + ": scancel: " + why(c));
  }
  return ended;
}

// The status the generation's batch script wrote; -1: none (yet).
int SlurmDriver::exit_code(const Record& rec) const {
  json exit = parse_json_bounded(
      small_file(job_dir(rec.job) + "/gen-" + std::to_string(rec.generation) + ".exit"));
  return exit.is_number_integer() ? exit.get<int>() : -1;
}

// Records, writes and submits the next generation; returns why it failed.
std::optional<std::string> SlurmDriver::submit(Record& rec,
                                               std::vector<exec::JobLaunch>& launches) {
  const std::string first = launches.front().node;
  exec::StateDir st(settings_.shared_dir + "/nodes/" + first);
  st.create();
  exec::GenerationSettings gs;
  gs.ckpt_root =
      options_.checkpoint_root.empty() ? settings_.shared_dir + "/ckpt" : options_.checkpoint_root;
  gs.report_interval = settings_.report_interval;
  gs.grace = settings_.grace_seconds;
  gs.file_exists = [](const std::string& p) { return fs::exists(p); };
  for (auto& l : launches) exec::prepare_generation(l, static_cast<int>(rec.generation), st, gs);
  st.write_launch(launches.front());  // what a batch-only change rewrites (Executor::resize)
  rec.slurm_id = 0;
  rec.node = first;
  rec.shape = shape_of(launches);
  rec.stop = false;
  rec.intent_at = options_.now();
  save(rec);  // before sbatch: a controller killed from here on adopts, never resubmits
  const std::string dir = job_dir(rec.job);
  fs::create_directories(dir);
  const std::string gen = dir + "/gen-" + std::to_string(rec.generation);
  const std::string type = slurm_gres_type(settings_, launches.front().gpu_type);
  const std::string scancel =
      settings_.bin_dir.empty() ? std::string("scancel") : settings_.bin_dir + "/scancel";
  os::write_file_atomic(
      gen + ".sh", slurm_batch_script(launches, type, gen + ".sh", gen + ".exit", scancel), 0644);
  auto r = runner_->run(sbatch_argv(settings_, launches, gen + ".sh", dir + "/slurm-%j.out"),
                        kCommandTimeout);
  long id = std::atol(r.out.c_str());  // --parsable: "ID" or "ID;CLUSTER"
  if (!r.ran || r.status != 0 || id <= 0) return "sbatch: " + why(r);
  rec.slurm_id = id;
  save(rec);
  return std::nullopt;
}

std::vector<NodeResult> SlurmDriver::deliver(std::int64_t, const Placement& placement,
                                             const json& jobs_doc) {
  if (!observed_) observe();
  std::map<std::string, std::size_t> index;
  std::vector<NodeResult> out;
  for (const auto& n : cluster_.nodes) {
    index[n.name] = out.size();
    out.push_back({n.name, reachable_, json{{"actions", json::array()}}, json(), unreachable_});
  }
  if (!reachable_) return out;
  std::vector<JobState> jobs;
  if (jobs_doc.contains("data") && jobs_doc["data"].contains("jobs")) {
    for (const auto& j : jobs_doc["data"]["jobs"])
      jobs.push_back(parse_job_state(Node(j, "jobs", "")));
  }
  auto act = [&](const std::string& node, const std::string& job, const std::string& action,
                 int generation, const std::string& warning) {
    json a = {{"job", job}, {"action", action}, {"round", generation}};
    if (!warning.empty()) a["warning"] = warning;
    if (index.count(node)) out[index[node]].plan["actions"].push_back(a);
  };
  std::map<std::string, std::vector<exec::JobLaunch>> wanted;
  for (const auto& jp : placement.jobs) {
    for (const auto& ng : jp.nodes) {
      for (auto& l : exec::plan_node(placement, cluster_, jobs, ng.node, "placement")) {
        if (l.job == jp.job) wanted[jp.job].push_back(std::move(l));
      }
    }
  }
  std::vector<Record*> stopping;
  std::set<std::string> keep;
  for (auto& [job, rec] : records_) {
    const Seen& s = seen_[job];
    if (!s.live) continue;
    auto w = wanted.find(job);
    if (w != wanted.end() && shape_of(w->second) == rec.shape) {
      keep.insert(job);
      exec::StateDir st(settings_.shared_dir + "/nodes/" + rec.node);
      exec::JobRecord running = st.record(job);
      if (running.launch && !exec::batch_change(*running.launch, w->second.front()).empty() &&
          exec::can_resize(*running.launch, w->second.front())) {
        os::SystemClock clock;
        exec::Executor(st, clock).resize(running, w->second.front());
        act(rec.node, job, "resize", rec.generation, "");
      } else {
        act(rec.node, job, "keep", rec.generation, "");
      }
    } else {
      stopping.push_back(&rec);
      act(rec.node, job, "stop", rec.generation, "");
    }
  }
  // A successor only once Slurm says the stopped generation ended as a stop allows: never
  // two generations of a job at once, none after a generation that finished meanwhile.
  const std::set<std::string> stopped = stop_all(stopping);
  for (auto& [job, launches] : wanted) {
    if (keep.count(job)) continue;
    if (seen_[job].live && !stopped.count(job)) continue;
    Record rec;
    rec.job = job;
    if (records_.count(job)) rec = records_[job];
    const bool before = rec.generation > 0;
    rec.generation += 1;
    if (auto failed = submit(rec, launches)) {
      out[index[launches.front().node]].acknowledged = false;
      out[index[launches.front().node]].error = "job " + job + ": " + *failed;
      continue;
    }
    act(rec.node, job, before ? "restart" : "start", rec.generation,
        launches.front().restore_missing ? "no checkpoint found: starting from step 0" : "");
    records_[job] = rec;
  }
  // Records of generations that ended and are placed no more are done with.
  for (const auto& [job, s] : seen_) {
    if (!s.live && !wanted.count(job)) fs::remove(record_path(job));
  }
  return out;
}

}  // namespace sia::ctl
