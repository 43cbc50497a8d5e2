#include "ctl/job_book.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "ctl/peers_lost.hpp"
#include "ctl/record_fields.hpp"
#include "policy/successive_halving.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxRejections = 100;

const char* kStates[] = {"queued", "running", "finished", "failed", "cancelled", "stopped"};
struct RequestName {
  const char* name;
  const char* past;
};
const RequestName kRequests[] = {
    {"cancel", "cancelled"}, {"hold", "held"}, {"release", "released"}, {"requeue", "requeued"}};

}  // namespace

const char* to_string(Lifecycle s) {
  return kStates[static_cast<int>(s)];
}

std::optional<Lifecycle> parse_lifecycle(const std::string& s) {
  for (std::size_t i = 0; i < std::size(kStates); ++i) {
    if (s == kStates[i]) return static_cast<Lifecycle>(i);
  }
  return std::nullopt;
}

const char* to_string(JobRequest r) {
  return kRequests[static_cast<int>(r)].name;
}

const char* past_tense(JobRequest r) {
  return kRequests[static_cast<int>(r)].past;
}

std::optional<JobRequest> parse_job_request(const std::string& s) {
  for (std::size_t i = 0; i < std::size(kRequests); ++i) {
    if (s == kRequests[i].name) return static_cast<JobRequest>(i);
  }
  return std::nullopt;
}

bool is_ended(Lifecycle s) {
  return s == Lifecycle::finished || s == Lifecycle::failed || s == Lifecycle::cancelled ||
         s == Lifecycle::stopped;
}

void BookApp::init_brackets() {
  bracket = hyperband_brackets(spec.scheduler, static_cast<int>(trials.size()));
  phases.assign(static_cast<std::size_t>(app_brackets(spec.scheduler)), 0);
}

int BookApp::bracket_of(const std::string& trial) const {
  if (phases.size() <= 1) return 0;  // one bracket: no search through the trials
  auto it = std::find(trials.begin(), trials.end(), trial);
  const auto i = static_cast<std::size_t>(it - trials.begin());
  return i < bracket.size() ? bracket[i] : 0;
}

json node_job_json(const JobBook& book, const BookJob& b, const std::string& checkpoint_root) {
  json j = job_spec_to_json(b.spec);
  json state = json::object();
  if (b.step > 0) state["step"] = b.step;
  if (const BookApp* a = b.spec.app.empty() ? nullptr : book.find_app(b.spec.app)) {
    const int k = a->bracket_of(b.spec.name);
    SuccessiveHalving sh = bracket_halving(a->spec, k, a->phase(k));
    if (sh.halving() && sh.budget() < 1) state["stop_fraction"] = sh.budget();
  }
  if (!checkpoint_root.empty()) {
    state["checkpoint_dir"] =
        (std::filesystem::path(checkpoint_root) / b.spec.name).lexically_normal().string();
  }
  if (b.run_as) state["run_as"] = run_as_to_json(*b.run_as);
  if (b.peer_restarts > 0) state["attempt"] = b.peer_restarts;
  if (!state.empty()) j["state"] = std::move(state);
  return j;
}

double silent_for(const BookJob& b, double now) {
  // Only a start its node confirmed starts the clock: a delivery that failed is not the
  // workers' silence.
  if (!b.placed || b.generation == 0 || is_ended(b.state)) return 0;
  const double since = std::max(b.started_time, b.last_report_time);
  return since > 0 ? std::max(0.0, now - since) : 0;
}

std::optional<double> undelivered_for(const JobBook& book, const BookJob& b, double now) {
  if (!b.placed || b.generation != 0 || is_ended(b.state)) return std::nullopt;
  auto n = book.nodes().find(b.report_node);
  if (n == book.nodes().end() || n->second.delivery_error.empty()) return std::nullopt;
  // Placed on that node since the earliest of the latest run of rounds that put rank 0 there.
  double since = 0;
  for (auto it = b.history.rbegin(); it != b.history.rend(); ++it) {
    if (!it->placed || it->placed->nodes.empty() ||
        it->placed->nodes.front().node != b.report_node) {
      break;
    }
    since = it->time;
  }
  return since > 0 ? std::max(0.0, now - since) : 0.0;
}

const BookJob* JobBook::find(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : &it->second;
}

const BookApp* JobBook::find_app(const std::string& app) const {
  auto it = apps_.find(app);
  return it == apps_.end() ? nullptr : &it->second;
}

bool JobBook::at_rung(const BookJob& b) const {
  if (b.spec.app.empty() || is_ended(b.state)) return false;
  const BookApp* a = find_app(b.spec.app);
  if (!a) return false;
  const int k = a->bracket_of(b.spec.name);
  return bracket_halving(a->spec, k, a->phase(k)).reached({b.spec.name, b.fraction, std::nullopt});
}

AppRef JobBook::app_ref(const BookApp& a, const std::string& trial) const {
  const int k = a.bracket_of(trial);
  return bracket_ref(a.spec.name, a.spec.scheduler, a.bracket, k, a.phase(k));
}

std::optional<double> latest_metric(const BookJob& b, const std::string& metric) {
  return b.last_report.is_object() ? finite(b.last_report, metric.c_str()) : std::nullopt;
}

std::optional<double> trial_metric(const BookJob& b, const std::string& metric) {
  return b.rung_metric ? b.rung_metric : latest_metric(b, metric);
}

std::vector<const BookJob*> JobBook::active() const {
  std::vector<const BookJob*> out;
  for (const auto& [name, j] : jobs_) {
    if (!is_ended(j.state)) out.push_back(&j);
  }
  std::sort(out.begin(), out.end(),
            [](const BookJob* a, const BookJob* b) { return a->order < b->order; });
  return out;
}

std::vector<std::string> JobBook::forget_ended_before(double cutoff) {
  std::vector<std::string> gone;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (is_ended(it->second.state) && it->second.end_time < cutoff) {
      retired_.insert(it->first);  // its report offsets stay: no line is taken twice
      gone.push_back(it->first);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  // An app goes with its last trial; its name stays taken too.
  for (auto it = apps_.begin(); it != apps_.end();) {
    const auto& trials = it->second.trials;
    if (std::none_of(trials.begin(), trials.end(),
                     [&](const std::string& t) { return jobs_.count(t) > 0; })) {
      retired_.insert(it->first);
      it = apps_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

std::int64_t JobBook::report_next(const std::string& node, const std::string& job) const {
  auto it = report_next_.find({node, job});
  return it == report_next_.end() ? 0 : it->second;
}

void JobBook::forget_inbox_except(const std::set<std::string>& present) {
  for (auto it = inbox_.begin(); it != inbox_.end();) {
    it = present.count(*it) ? std::next(it) : inbox_.erase(it);
  }
}

bool known_record_type(const std::string& type) {
  // The types apply() dispatches on below, in its order.
  for (const char* t : {"submit", "report", "round", "delivered", "app-phase", "rejected",
                        "job-silent", "job-peer-lost", "node-seen", "job-ended"}) {
    if (type == t) return true;
  }
  return parse_job_request(type).has_value();
}

bool JobBook::apply(const json& r) {
  if (!r.is_object()) return false;
  if (auto s = r.find("seq"); s != r.end() && s->is_number_integer()) seq_ = s->get<std::int64_t>();
  const std::string type = str_of(r, "type");
  const double time = num_of(r, "time");
  if (type == "submit") return apply_submit(r);
  if (type == "report") return apply_report(r);
  if (type == "round") return apply_round(r);
  if (type == "delivered") return apply_delivered(r);
  if (type == "app-phase") return apply_app_phase(r);
  if (type == "rejected") {
    inbox_.insert(str_of(r, "inbox"));
    for (const auto& j : arr_of(r, "jobs")) {
      if (!j.is_string()) continue;
      rejections_.push_back(
          {j.get<std::string>(), str_of(r, "identity"), time, str_of(r, "reason")});
      if (rejections_.size() > kMaxRejections) rejections_.pop_front();
    }
    return true;
  }
  if (auto request = parse_job_request(type)) {
    inbox_.insert(str_of(r, "inbox"));
    const std::string who = str_of(r, "identity", "?");
    bool changed = false;
    std::vector<std::string> names;  // an app's name stands for its trials
    for (const auto& j : arr_of(r, "jobs")) {
      if (!j.is_string()) continue;
      auto app = apps_.find(j.get<std::string>());
      if (app == apps_.end()) {
        names.push_back(j.get<std::string>());
      } else {
        names.insert(names.end(), app->second.trials.begin(), app->second.trials.end());
      }
    }
    for (const auto& name : names) {
      auto it = jobs_.find(name);
      if (it == jobs_.end() || is_ended(it->second.state)) continue;
      BookJob& b = it->second;
      switch (*request) {
        case JobRequest::cancel:
          b.state = Lifecycle::cancelled;
          b.reason = "cancelled by " + identity_name(who);
          b.end_time = time;
          b.placed.reset();
          changed = true;
          break;
        case JobRequest::hold:
          if (!b.held_by.empty()) break;
          b.held_by = who;
          b.held_time = time;
          changed = true;
          break;
        case JobRequest::release:
          if (b.held_by.empty()) break;
          b.held_by.clear();
          b.held_time = 0;
          changed = true;
          break;
        case JobRequest::requeue:
          if (!b.placed || !b.requeue_by.empty()) break;
          b.requeue_by = who;
          changed = true;
          break;
      }
    }
    return changed;
  }
  if (type == "job-silent") {
    auto it = jobs_.find(str_of(r, "job"));
    if (it == jobs_.end() || is_ended(it->second.state)) return false;
    ++it->second.silent_restarts;
    it->second.notice = "its workers sent no report for " +
                        std::to_string(static_cast<long long>(num_of(r, "silent_for"))) +
                        " s: restarted from its checkpoint";
    return true;
  }
  if (type == "job-peer-lost") {
    auto it = jobs_.find(str_of(r, "job"));
    if (it == jobs_.end() || is_ended(it->second.state)) return false;
    BookJob& b = it->second;
    const auto attempt = static_cast<int>(int_of(r, "attempt", b.peer_restarts + 1));
    if (attempt <= b.peer_restarts) return false;  // one already counted
    b.peer_retries_used += attempt - b.peer_restarts;
    b.peer_restarts = attempt;
    b.peer_lost_generation = int_of(r, "generation", 0);
    b.peer_lost_step = b.step;
    b.notice = std::string(kPeersLost) + " (round " + std::to_string(b.peer_lost_generation) +
               ", reported by " + str_of(r, "node") + "): restarted from its checkpoint (attempt " +
               std::to_string(attempt) + ")";
    return true;
  }
  if (type == "node-seen") {
    BookNode& n = nodes_[str_of(r, "node")];
    n.name = str_of(r, "node");
    n.up = bool_of(r, "up");
    n.error = str_of(r, "error");
    n.last_check = time;
    if (n.up) n.last_seen = time;
    return true;
  }
  if (type == "job-ended") {
    auto it = jobs_.find(str_of(r, "job"));
    if (it == jobs_.end() || is_ended(it->second.state)) return false;
    auto st = parse_lifecycle(str_of(r, "state"));
    if (!st || !is_ended(*st)) return false;
    BookJob& b = it->second;
    b.state = *st;
    b.reason = str_of(r, "reason");
    b.end_time = time;
    if (auto e = r.find("exit_status"); e != r.end() && e->is_number_integer()) {
      b.exit_status = e->get<int>();
    }
    if (auto t = r.find("log_tail"); t != r.end()) b.log_tail = log_tail_from_json(*t);
    b.placed.reset();
    b.restoring = false;
    return true;
  }
  return false;
}

bool JobBook::apply_submit(const json& r) {
  inbox_.insert(str_of(r, "inbox"));
  bool changed = false;
  std::optional<RunAs> run_as;
  if (auto it = r.find("run_as"); it != r.end() && !it->is_null()) {
    run_as = parse_run_as(Node(*it, "journal", "run_as"));
  }
  std::size_t i = 0;
  for (const auto& spec : arr_of(r, "jobs")) {
    Node n(spec, "journal", "jobs[" + std::to_string(i++) + "]");
    BookJob b;
    b.spec = parse_job_spec(n);
    if (jobs_.count(b.spec.name)) continue;
    b.identity = str_of(r, "identity");
    b.run_as = run_as;
    b.submit_time = num_of(r, "time");
    fix_deadline(b.spec, b.submit_time);  // a duration ("36h") counts from the request
    b.order = next_order_++;
    std::string name = b.spec.name;
    jobs_.emplace(name, std::move(b));
    changed = true;
  }
  i = 0;
  for (const auto& data : arr_of(r, "apps")) {
    BookApp a;
    a.spec = parse_app_spec(Node(data, "journal", "apps[" + std::to_string(i++) + "]"));
    if (apps_.count(a.spec.name)) continue;
    a.identity = str_of(r, "identity");
    a.submit_time = num_of(r, "time");
    a.order = next_order_;
    for (const auto& [name, b] : jobs_) {
      if (b.spec.app == a.spec.name) a.trials.push_back(name);
    }
    std::sort(a.trials.begin(), a.trials.end(), [&](const std::string& x, const std::string& y) {
      return jobs_.at(x).order < jobs_.at(y).order;
    });
    if (!a.trials.empty()) a.order = jobs_.at(a.trials.front()).order;
    a.init_brackets();
    std::string name = a.spec.name;
    apps_.emplace(name, std::move(a));
    changed = true;
  }
  return changed;
}

bool JobBook::apply_app_phase(const json& r) {
  auto it = apps_.find(str_of(r, "app"));
  if (it == apps_.end()) return false;
  BookApp& a = it->second;
  const auto phase = int_of(r, "phase", -1);
  const auto k = int_of(r, "bracket", 0);
  if (k < 0 || k >= static_cast<std::int64_t>(a.phases.size())) return false;
  const int b = static_cast<int>(k);
  if (phase <= a.phase(b) || phase >= bracket_scheduler(a.spec.scheduler, b).rungs) return false;
  a.phases[static_cast<std::size_t>(b)] = static_cast<int>(phase);
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    if (a.bracket[i] != b) continue;
    if (auto j = jobs_.find(a.trials[i]); j != jobs_.end()) j->second.rung_metric.reset();
  }
  return true;
}

void JobBook::note_rung(BookJob& b, const json& rep) {
  if (b.spec.app.empty() || b.rung_metric) return;
  auto it = apps_.find(b.spec.app);
  if (it == apps_.end()) return;
  const BookApp& a = it->second;
  const int k = a.bracket_of(b.spec.name);
  if (!bracket_halving(a.spec, k, a.phase(k)).reached({b.spec.name, b.fraction, std::nullopt})) {
    return;
  }
  b.rung_metric = finite(rep, a.spec.metric.c_str());
}

std::string identity_name(const std::string& identity) {
  return identity.substr(0, identity.find(' '));
}

bool JobBook::apply_report(const json& r) {
  const std::string node = str_of(r, "node");
  const std::string job = str_of(r, "job");
  const std::int64_t offset = int_of(r, "offset", -1);
  const std::int64_t next = int_of(r, "next", -1);
  if (node.empty() || job.empty() || offset < 0 || next <= offset) return false;
  auto key = std::make_pair(node, job);
  auto known = report_next_.find(key);
  if (known != report_next_.end() && offset < known->second) return false;  // seen before
  report_next_[key] = next;
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return true;
  const json& rep = r.contains("report") ? r["report"] : json();
  if (!rep.is_object() || str_of(rep, "type", "report") != "report") return true;
  BookJob& b = it->second;
  if (is_ended(b.state)) {
    // A failed job's last words, read after its node said it failed: the step it reached.
    auto step = in_range(rep, "step", 0, kMaxExactInteger);
    if (b.state == Lifecycle::failed && step && *step > static_cast<double>(b.step)) {
      b.step = static_cast<std::int64_t>(*step);
      if (auto p = finite(rep, "progress"); p && *p > b.progress) b.progress = *p;
    }
    return true;
  }
  ++b.reports;
  b.last_report = rep;
  // A worker's numbers are untrusted: counts and sizes outside what a job can have are
  // ignored, so none overflows the int or int64 it becomes.
  auto step_time = in_range(rep, "step_time", 0, kMaxSeconds);
  auto world = in_range(rep, "world_size", 1, kMaxJobGpus);
  auto local = in_range(rep, "local_bsz", 1, kMaxBatchSize);
  std::string gpu_type = str_of(rep, "gpu_type", b.placed ? b.placed->gpu_type : "");
  if (step_time && *step_time > 0 && world && local && !gpu_type.empty()) {
    ProfilePoint p;
    p.gpu_type = gpu_type;
    p.nodes = static_cast<int>(in_range(rep, "nodes", 1, kMaxJobGpus).value_or(1));
    p.replicas = static_cast<int>(*world);
    p.local_bsz = static_cast<int>(*local);
    p.step_time = *step_time;
    p.sync_time = std::clamp(finite(rep, "sync_time").value_or(0), 0.0, *step_time);
    auto same = std::find_if(b.observations.begin(), b.observations.end(), [&](const auto& o) {
      return o.point.gpu_type == p.gpu_type && o.point.nodes == p.nodes &&
             o.point.replicas == p.replicas && o.point.local_bsz == p.local_bsz;
    });
    if (same == b.observations.end()) {
      b.observations.push_back({p, 1});
    } else {
      ++same->count;
      same->point.step_time += (p.step_time - same->point.step_time) / same->count;
      same->point.sync_time += (p.sync_time - same->point.sync_time) / same->count;
      same->point.sync_time = std::min(same->point.sync_time, same->point.step_time);
    }
  }
  auto sqr = finite(rep, "grad_sqr");
  auto var = finite(rep, "grad_var");
  if (sqr && var && *sqr >= 0 && *var >= 0) b.gradient = GradientStats{*sqr, *var};
  b.last_report_node = node;
  b.last_report_at = num_of(r, "time");
  take_position(b, rep, node, b.last_report_at);
  return true;
}

void JobBook::take_position(BookJob& b, const json& rep, const std::string& node, double time) {
  // The current generation's report is the job's real position; another generation's (the
  // last words of a stopped one) only moves it forward, and only until the current one
  // has reported.
  const bool current =
      node == b.report_node && b.generation > 0 && int_of(rep, "round", -1) == b.generation;
  auto step = in_range(rep, "step", -kMaxExactInteger, kMaxExactInteger);
  // Progress (samples, sia-worker(7)) past what any counter holds (1e300) is not a position.
  auto progress = in_range(rep, "progress", 0, kMaxExactInteger);
  if (current && step && *step >= 0 && *step < static_cast<double>(b.step)) {
    const auto at = static_cast<std::int64_t>(*step);
    b.lost_steps += b.step - at;
    // Why it started again stays said: no checkpoint found, or a restart for lost peers.
    const bool why = b.notice.rfind("no checkpoint", 0) == 0 || b.notice.rfind(kPeersLost, 0) == 0;
    b.notice = "round " + std::to_string(b.generation) + " on " + node + " resumed at step " +
               std::to_string(at) + ", not " + std::to_string(b.step) + ": " +
               std::to_string(b.step - at) + " steps lost" + (why ? " (" + b.notice + ")" : "");
    b.step = at;
    b.progress = progress.value_or(0);
    b.fraction = in_range(rep, "fraction", 0, 1).value_or(0);
  } else if (current || b.restoring || b.generation == 0) {
    if (progress && *progress > b.progress) b.progress = *progress;
    if (step && *step > static_cast<double>(b.step)) b.step = static_cast<std::int64_t>(*step);
    if (auto f = in_range(rep, "fraction", 0, 1); f && *f > b.fraction) b.fraction = *f;
  }
  note_rung(b, rep);
  if (current) {
    if (b.restoring || b.gen_step < 0) {  // the generation's first report
      b.gen_step = b.step;
      b.gen_progress = b.progress;
    }
    b.last_report_time = std::max(b.last_report_time, time);
    if (b.silent_restarts > 0) b.notice.clear();  // it speaks again
    b.silent_restarts = 0;
    // Past where its peers were last lost, on a generation started since: the cut that
    // cost it those restarts is behind it; a later one counts from 0 again.
    if (b.generation > b.peer_lost_generation && b.step > b.peer_lost_step) {
      b.peer_retries_used = 0;
    }
    b.restoring = false;
    if (str_of(rep, "reason") == "done") b.done_reported = true;
  }
}

bool JobBook::apply_round(const json& r) {
  const double time = num_of(r, "time");
  round_ = int_of(r, "round", round_ + 1);
  if (last_round_time_ > 0 && time > last_round_time_) {
    for (auto& [name, b] : jobs_) {
      if (!is_ended(b.state) && b.placed)
        b.attained_service += b.placed->gpus() * (time - last_round_time_);
    }
  }
  last_round_time_ = time;
  last_cluster_ = r.contains("cluster") ? r["cluster"] : json();
  last_allocation_ = r.contains("allocation") ? r["allocation"] : json();
  last_placement_ = r.contains("placement") ? r["placement"] : json();
  last_reserved_.clear();
  for (const auto& n : arr_of(r, "reserved")) {
    if (n.is_string()) last_reserved_.insert(n.get<std::string>());
  }
  if (auto m = r.find("models"); m != r.end() && m->is_object()) {
    for (auto it = m->begin(); it != m->end(); ++it) {
      auto j = jobs_.find(it.key());
      if (j != jobs_.end() && !is_ended(j->second.state) && it.value().is_object()) {
        j->second.models = it.value();
      }
    }
  }
  std::map<std::string, const json*> placed;
  for (const auto& e : arr_of(last_placement_, "jobs")) placed[str_of(e, "name")] = &e;
  for (auto& [name, b] : jobs_) {
    if (is_ended(b.state)) continue;
    auto it = placed.find(name);
    if (it == placed.end()) b.requeue_by.clear();  // this round left it out: requeued
    std::optional<Placed> now;
    if (it != placed.end()) now = placed_from_json(*it->second);
    if (now && now->nodes.empty()) now.reset();
    if (now != b.placed) b.history.push_back({round_, time, now});
    if (now) {
      b.state = Lifecycle::running;
      if (b.report_node != now->nodes.front().node) {
        b.report_node = now->nodes.front().node;
        b.generation = 0;
      }
    } else {
      b.state = Lifecycle::queued;
      b.restoring = false;
      b.done_reported = false;
    }
    b.placed = std::move(now);
  }
  if (auto f = r.find("fairness"); f != r.end()) apply_round_fairness(*f);
  if (auto d = r.find("deadlines"); d != r.end() && d->is_object()) {
    for (auto it = d->begin(); it != d->end(); ++it) {
      auto j = jobs_.find(it.key());
      if (j == jobs_.end() || is_ended(j->second.state) || !it.value().is_object()) continue;
      const json& v = it.value();
      j->second.projected_finish.reset();
      if (v.contains("finish") && v["finish"].is_number()) {
        j->second.projected_finish = v["finish"].get<double>();
      }
      j->second.at_risk = v.value("at_risk", false);
    }
  }
  return true;
}

bool JobBook::apply_delivered(const json& r) {
  const std::string node = str_of(r, "node");
  if (node.empty()) return false;
  BookNode& n = nodes_[node];
  n.name = node;
  n.delivered_round = int_of(r, "round");
  n.delivery_error = bool_of(r, "ok") ? "" : str_of(r, "error", "failed");
  for (const auto& a : arr_of(r, "actions")) {
    auto it = jobs_.find(str_of(a, "job"));
    if (it == jobs_.end() || is_ended(it->second.state)) continue;
    BookJob& b = it->second;
    if (b.report_node != node || !b.placed) continue;
    const std::string action = str_of(a, "action");
    const int generation = static_cast<int>(int_of(a, "generation"));
    if (action == "start" || action == "restart") {
      b.started_time = last_round_time_;
      ++b.starts;
      b.generation = generation;
      b.restoring = true;
      b.done_reported = false;
      b.gen_step = -1;
    } else if (action == "keep" || action == "leave" || action == "resize") {
      if (b.generation != generation) b.done_reported = false;
      if (b.generation != generation || action == "resize") b.gen_step = -1;  // a new rate
      b.generation = generation;
    }
    if (auto w = str_of(a, "warning"); !w.empty()) b.notice = w;
    // Its new workers' first report can come before the node's answer: it counts now.
    if (b.restoring && b.last_report_node == node && b.last_report.is_object() &&
        int_of(b.last_report, "round", -1) == generation) {
      take_position(b, b.last_report, node, b.last_report_at);
    }
  }
  return true;
}

JobState JobBook::job_state(const BookJob& b, double now) const {
  JobState s;
  if (!b.models.empty()) {
    json j = job_spec_to_json(b.spec);
    j["state"] = {{"models", b.models}};
    try {
      s = parse_job_state(Node(j, "state", b.spec.name));
    } catch (const Error&) {
      s = JobState{};  // a model cache that does not read is refitted
    }
  }
  s.spec = b.spec;
  s.file.clear();
  s.path = b.spec.name;
  s.age = std::max(0.0, now - b.submit_time);
  s.restarts = std::max(0, b.starts - 1);
  if (b.placed) {
    CurrentAllocation c;
    c.gpu_type = b.placed->gpu_type;
    for (const auto& ng : b.placed->nodes) c.placement.push_back(static_cast<int>(ng.gpus.size()));
    std::sort(c.placement.rbegin(), c.placement.rend());
    s.current = c;
  }
  s.restoring = b.placed && b.restoring;
  s.attained_service = b.attained_service;
  for (const auto& o : b.observations) s.observations.push_back(o.point);
  s.gradient = b.gradient;
  s.progress = b.progress;
  // The workers know where their training ends (the fraction of it they report); the
  // catalog's target is the model's in the paper's setup, not this command's.
  if (!(s.target_progress > 0) && b.fraction > 0 && b.progress > 0) {
    s.target_progress = b.progress / b.fraction;
  }
  return s;
}

}  // namespace sia::ctl
