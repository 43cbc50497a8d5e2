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
#include "ctl/slurm_generations.hpp"
#include "exec/executor.hpp"
#include "exec/node_plan.hpp"
#include "exec/process_exit.hpp"
#include "exec/report_lines.hpp"
#include "exec/run_as.hpp"
#include "model/job_state.hpp"
#include "os/atomic_file.hpp"
#include "os/clock.hpp"
#include "os/make_dirs.hpp"
#include "os/random_text.hpp"
#include "os/remove_tree.hpp"
#include "os/safe_open.hpp"
#include "slurm/job_mark.hpp"
#include "slurm/slurm_cluster.hpp"

namespace sia::ctl {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using slurm::kCommandTimeout;  // seconds for sbatch or scancel
// An exit file holds a status and a newline: anything longer is refused, not read.
constexpr std::int64_t kMaxExitFile = 64;
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

void SlurmDriver::forget(const std::vector<std::string>& jobs) {
  for (const auto& job : jobs) {
    std::error_code ec;
    fs::remove(record_path(job), ec);
    forget_slurm_generations(options_.state_dir, job);
    // The job's directory is its user's: removed through descriptors, no link followed
    // (os/remove_tree.hpp), from SHARED/slurm opened as a directory, not through a link.
    try {
      os::remove_tree(job_dir(job));
    } catch (const Error& e) {
      warnings_.push_back("job " + job + ": " + e.what());
    }
    records_.erase(job);
    seen_.erase(job);
  }
}

std::string SlurmDriver::job_dir(const std::string& job) const {
  return settings_.shared_dir + "/slurm/" + job;
}

std::vector<SlurmDriver::Record> SlurmDriver::load_records(const std::string& state_dir,
                                                           long default_uid) {
  std::vector<Record> out;
  if (!fs::is_directory(state_dir + "/slurm")) return out;
  for (const auto& e : fs::directory_iterator(state_dir + "/slurm")) {
    if (e.path().extension() != ".json") continue;
    json j = parse_json_bounded(small_file(e.path().string()));
    if (!j.is_object()) continue;
    out.push_back(record_of(e.path().stem().string(), j, default_uid));
  }
  return out;
}

std::vector<slurm::OwnedJob> SlurmDriver::owned_jobs(const std::vector<Record>& records) {
  std::vector<slurm::OwnedJob> out;
  for (const auto& r : records) {
    if (r.refused.empty()) out.push_back(owned(r));
    if (r.previous_job != 0)  // the generation before, perhaps still completing
      out.push_back({{r.job, r.previous_generation}, r.uid, r.previous_job});
  }
  return out;
}

SlurmDriver::Record SlurmDriver::record_of(const std::string& job, const json& j,
                                           long default_uid) {
  Record r;
  r.job = job;
  r.generation = j.value("generation", 0L);
  r.slurm_id = j.value("slurm_job", 0L);
  r.node = j.value("node", "");
  r.shape = j.value("shape", "");
  r.attempt = j.value("attempt", 0);  // a record from before the field: the first attempt
  r.stop = j.value("stop", false);
  // A record from before the field: submitted as the controller's own user.
  r.uid = j.value("uid", default_uid);
  r.previous_job = j.value("previous_slurm_job", 0L);
  r.previous_generation = j.value("previous_generation", 0L);
  r.refused = j.value("refused", "");
  r.intent_at = j.value("intent_at", 0.0);
  r.token = j.value("token", "");  // a record from before the field: none
  return r;
}

void SlurmDriver::save(const Record& r) const {
  fs::create_directories(options_.state_dir + "/slurm");
  json j = {{"job", r.job},
            {"generation", r.generation},
            {"slurm_job", r.slurm_id},
            {"node", r.node},
            {"shape", r.shape},
            {"attempt", r.attempt},
            {"stop", r.stop},
            {"uid", r.uid},
            {"previous_slurm_job", r.previous_job},
            {"previous_generation", r.previous_generation},
            {"intent_at", r.intent_at}};
  if (!r.token.empty()) j["token"] = r.token;
  if (!r.refused.empty()) j["refused"] = r.refused;
  os::write_file_atomic(record_path(r.job), j.dump() + "\n");
}

std::vector<std::string> SlurmDriver::take_warnings() {
  return std::exchange(warnings_, {});
}

slurm::OwnedJob SlurmDriver::owned(const Record& rec) {
  return {{rec.job, rec.generation, rec.token}, rec.uid, rec.slurm_id, rec.intent_at};
}

// The Slurm job of the record's generation, when Slurm lists it as sia's (slurm::owned_job:
// the record's mark, uid and id -- with no id yet, submitted within its intent's sbatch);
// the lowest id of a heterogeneous job's components.
const slurm::SlurmJob* SlurmDriver::own_job(const Record& rec) const {
  return slurm::owned_job(owned(rec), slurm_jobs_);
}

// sbatch and scancel run as the record's user (slurm/command_runner.hpp, run_as), unless
// that is the controller's own (options.sia_uid).
slurm::CommandResult SlurmDriver::run_for(const Record& rec, const std::vector<std::string>& argv) {
  if (rec.uid == options_.sia_uid || rec.uid < 0) return runner_->run(argv, kCommandTimeout);
  std::optional<os::Account> a;
  try {
    a = os::find_account(static_cast<uid_t>(rec.uid));
  } catch (const Error& e) {
    return {false, 0, "", e.what()};
  }
  if (!a) return {false, 0, "", "no account has uid " + std::to_string(rec.uid)};
  return runner_->run_as(*a, argv, kCommandTimeout);
}

// The status the batch script wrote to the job's directory (the job's user's): read through
// a descriptor (os/safe_open.hpp: a link, a FIFO or a second hard link planted there is
// refused, never followed) and only when it is at most kMaxExitFile bytes. nullopt when
// there is none or it is refused (with a warning).
std::optional<int> SlurmDriver::read_exit(const Record& rec) {
  const std::string dir = job_dir(rec.job);
  const std::string name = "gen-" + std::to_string(rec.generation) + ".exit";
  try {
    if (!fs::exists(fs::symlink_status(dir))) return std::nullopt;
    os::Fd d = os::open_dir(dir);
    os::Fd f = os::open_in(d.get(), name, os::Access::read, false, 0, dir + "/" + name);
    if (!f) return std::nullopt;
    if (os::file_size(f.get(), dir + "/" + name) > kMaxExitFile) {
      throw Error(ExitStatus::no_perm, dir + "/" + name + ": refused: more than " +
                                           std::to_string(kMaxExitFile) + " bytes");
    }
    json exit = parse_json_bounded(os::read_at(f.get(), 0, kMaxExitFile));
    if (exit.is_number_integer()) return exit.get<int>();
  } catch (const Error& e) {
    warnings_.push_back("job " + rec.job + ": exit status: " + e.what());
  }
  return std::nullopt;
}

SlurmDriver::Seen SlurmDriver::classify(Record& rec) {
  Seen s;
  if (!rec.refused.empty()) {  // never submitted: its user may not run it here
    s.status = {
        {"name", rec.job}, {"round", rec.generation}, {"state", "failed"}, {"reason", rec.refused}};
    return s;
  }
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
    record_slurm_generation(options_.state_dir, rec.job, {rec.generation, rec.slurm_id, rec.node});
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
  const int code = read_exit(rec).value_or(-1);
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
    std::vector<Record> recs;
    for (const auto& [job, rec] : records_) recs.push_back(rec);
    usable_ = slurm::usable_gpus(nodes, slurm_jobs_, settings_, owned_jobs(recs));
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
  // The records first: they say which of Slurm's jobs are sia's (read_slurm).
  for (auto& rec : load_records(options_.state_dir, options_.sia_uid)) records_[rec.job] = rec;
  read_slurm();
  std::map<std::string, json> jobs_of;
  if (reachable_) {
    for (auto& [job, rec] : records_) {
      Seen s = classify(rec);
      if (!s.absent) jobs_of[rec.node].push_back(s.status);
      seen_[job] = s;
    }
  } else {
    records_.clear();
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
      auto c = run_for(*r, {"scancel", std::to_string(r->slurm_id)});
      if (!c.ran || c.status != 0) warnings_.push_back("job " + r->job + ": scancel: " + why(c));
      continue;
    }
    auto c = run_for(*r, {"scancel", "--batch", "--signal=TERM", std::to_string(r->slurm_id)});
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
    const int code = read_exit(*r).value_or(-1);
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
    auto c = run_for(*r, {"scancel", std::to_string(r->slurm_id)});
    if (!c.ran || c.status != 0) warnings_.push_back("job " + r->job + ": scancel: " + why(c));
  }
  return ended;
}

// Records, writes and submits the next generation; returns why sbatch failed. Throws
// Error when the job may not run as its user (exec::job_account) or its files cannot be
// prepared.
std::optional<std::string> SlurmDriver::submit(Record& rec,
                                               std::vector<exec::JobLaunch>& launches) {
  const std::string first = launches.front().node;
  // Whom the job runs as: the rule sia-run applies on a node (exec/run_as.hpp), applied by
  // the controller, which submits as that user (run_for).
  const std::optional<os::Account> account = exec::job_account(launches.front().run_as, first);
  rec.refused.clear();
  exec::StateDir st(settings_.shared_dir + "/nodes/" + first);
  st.create();
  exec::GenerationSettings gs;
  gs.ckpt_root =
      options_.checkpoint_root.empty() ? settings_.shared_dir + "/ckpt" : options_.checkpoint_root;
  gs.report_interval = settings_.report_interval;
  gs.grace = settings_.grace_seconds;
  gs.file_exists = [](const std::string& p) { return fs::exists(p); };
  // Two sias sharing nodes (two users', or two beds on one machine) run jobs of the same
  // name: their rendezvous ports differ by the shared directory; a one-node job's port is
  // also probed (no other node to agree with).
  gs.port_scope = settings_.shared_dir;
  gs.port_free = exec::tcp_port_free;
  for (auto& l : launches) exec::prepare_generation(l, static_cast<int>(rec.generation), st, gs);
  st.write_launch(launches.front());  // what a batch-only change rewrites (Executor::resize)
  // The ranks' files, as sia-run makes them before it starts a job: the checkpoint
  // directory and report file exist and, with all logs, are the job's user's.
  const exec::JobLaunch& lead = launches.front();
  if (!lead.ckpt_dir.empty()) os::make_dirs(lead.ckpt_dir, os::kPrivateDir, os::kTraverseDir);
  if (!lead.report.empty()) os::open_file(lead.report, os::Access::append, true);
  exec::give_job_files(lead, st.job_dir(lead.job) + "/logs");
  // The generation before, stopped but perhaps still completing in Slurm, stays sia's.
  if (rec.slurm_id != 0) {
    rec.previous_job = rec.slurm_id;
    rec.previous_generation = rec.generation - 1;  // deliver() counted this one up
  }
  rec.slurm_id = 0;
  rec.uid = account ? static_cast<long>(account->uid) : options_.sia_uid;
  rec.node = first;
  rec.shape = shape_of(launches);
  rec.attempt = launches.front().attempt;
  rec.stop = false;
  rec.intent_at = options_.now();
  rec.token = os::random_text(slurm::kMarkTokenLength);
  save(rec);  // before sbatch: a controller killed from here on adopts, never resubmits
  // The job's directory (its script, Slurm's output, the exit file) is the job's user's:
  // made 0700 by root in SHARED/slurm (root's, 0711: the user can neither rename nor
  // replace its own directory) and handed over through the descriptor.
  const std::string dir = job_dir(rec.job);
  os::make_dirs(dir, os::kPrivateDir, os::kTraverseDir);
  os::Fd d = os::open_dir(dir);
  if (account) os::give_fd(d.get(), *account, os::kPrivateDir, dir);
  const std::string name = "gen-" + std::to_string(rec.generation);
  const std::string gen = dir + "/" + name;
  const std::string type = slurm_gres_type(settings_, launches.front().gpu_type);
  const std::string scancel =
      settings_.bin_dir.empty() ? std::string("scancel") : settings_.bin_dir + "/scancel";
  os::write_file_atomic_in(d.get(), name + ".sh",
                           slurm_batch_script(launches, type, gen + ".sh", gen + ".exit", scancel),
                           os::kPrivateFile, account ? &*account : nullptr, gen + ".sh");
  auto r =
      run_for(rec, sbatch_argv(settings_, launches, gen + ".sh", dir + "/slurm-%j.out", rec.token));
  long id = std::atol(r.out.c_str());  // --parsable: "ID" or "ID;CLUSTER"
  if (!r.ran || r.status != 0 || id <= 0) return "sbatch: " + why(r);
  rec.slurm_id = id;
  save(rec);
  record_slurm_generation(options_.state_dir, rec.job, {rec.generation, id, rec.node});
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
    // The same shape for the same attempt; a new attempt starts the job again, as on an
    // agent (exec::launch_change).
    if (w != wanted.end() && shape_of(w->second) == rec.shape &&
        w->second.front().attempt == rec.attempt) {
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
    std::optional<std::string> failed;
    try {
      failed = submit(rec, launches);
    } catch (const Error& e) {
      // Its user may not run it here, or a file of the job's could not be made or given
      // (a link its user planted, refused): the generation fails with the reason, as on
      // an agent, and is never submitted -- that job, not the round.
      failed = e.what();
      rec.slurm_id = 0;
      rec.node = launches.front().node;
      rec.refused = *failed;
      save(rec);
    }
    if (failed) {
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
