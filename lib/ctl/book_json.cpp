// JobBook <-> the data of a ControllerState snapshot (job_book.hpp).
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ctl/job_book.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

json opt_placed(const std::optional<Placed>& p) {
  return p ? placed_to_json(*p) : json(nullptr);
}

json fair_to_json(const FairnessBook& f) {
  return {{"contention_sum", f.contention_sum},
          {"rounds", f.rounds},
          {"t_sh", f.t_sh},
          {"t_id", f.t_id},
          {"measured", f.measured}};
}

FairnessBook fair_from_json(const std::optional<Node>& n) {
  FairnessBook f;
  if (!n) return f;  // snapshots from before it
  f.contention_sum = n->at("contention_sum").non_negative_number();
  f.rounds = n->at("rounds").int_in(0, std::numeric_limits<std::int64_t>::max());
  f.t_sh = n->at("t_sh").non_negative_number();
  f.t_id = n->at("t_id").non_negative_number();
  f.measured = n->bool_or("measured", false);
  return f;
}

json job_to_json(const BookJob& b) {
  json obs = json::array();
  for (const auto& o : b.observations) {
    json p = profile_point_to_json(o.point);
    p["count"] = o.count;
    obs.push_back(p);
  }
  json hist = json::array();
  for (const auto& h : b.history) {
    hist.push_back({{"round", h.round}, {"time", h.time}, {"placed", opt_placed(h.placed)}});
  }
  return {
      {"spec", job_spec_to_json(b.spec)},
      {"identity", b.identity},
      {"run_as", b.run_as ? run_as_to_json(*b.run_as) : json(nullptr)},
      {"submit_time", b.submit_time},
      {"order", b.order},
      {"state", to_string(b.state)},
      {"reason", b.reason},
      {"held_by", b.held_by},
      {"held_time", b.held_time},
      {"requeue_by", b.requeue_by},
      {"end_time", b.end_time},
      {"exit_status", b.exit_status ? json(*b.exit_status) : json(nullptr)},
      {"log_tail", b.log_tail ? log_tail_to_json(*b.log_tail) : json(nullptr)},
      {"placed", opt_placed(b.placed)},
      {"report_node", b.report_node},
      {"generation", b.generation},
      {"starts", b.starts},
      {"restoring", b.restoring},
      {"done_reported", b.done_reported},
      {"attained_service", b.attained_service},
      {"observations", obs},
      {"gradient", b.gradient ? json{{"grad_sqr", b.gradient->sqr}, {"grad_var", b.gradient->var}}
                              : json(nullptr)},
      {"progress", b.progress},
      {"step", b.step},
      {"lost_steps", b.lost_steps},
      {"notice", b.notice},
      {"reports", b.reports},
      {"started_time", b.started_time},
      {"last_report_time", b.last_report_time},
      {"silent_restarts", b.silent_restarts},
      {"peer_restarts", b.peer_restarts},
      {"peer_lost_generation", b.peer_lost_generation},
      {"peer_retries_used", b.peer_retries_used},
      {"peer_lost_step", b.peer_lost_step},
      {"last_report", b.last_report},
      {"last_report_node", b.last_report_node},
      {"last_report_at", b.last_report_at},
      {"models", b.models},
      {"history", hist},
      {"fraction", b.fraction},
      {"rung_metric", b.rung_metric ? json(*b.rung_metric) : json(nullptr)},
      {"fair", fair_to_json(b.fair)},
      {"gen_start", {{"step", b.gen_step}, {"progress", b.gen_progress}}},
      {"projected_finish", b.projected_finish ? json(*b.projected_finish) : json(nullptr)},
      {"at_risk", b.at_risk}};
}

json app_to_json(const BookApp& a) {
  return {{"spec", app_spec_to_json(a.spec)},
          {"identity", a.identity},
          {"submit_time", a.submit_time},
          {"order", a.order},
          {"trials", a.trials},
          {"phase", a.phase(0)},
          {"phases", a.phases},
          {"fair", fair_to_json(a.fair)}};
}

BookApp app_from_json(const Node& n) {
  BookApp a;
  a.spec = parse_app_spec(n.at("spec"));
  a.identity = n.string_or("identity", "");
  a.submit_time = n.number_or("submit_time", 0);
  a.order = n.int_or("order", 0);
  a.trials = n.at("trials").as_strings();
  a.init_brackets();
  if (auto ps = n.get("phases")) {  // one per bracket
    if (ps->size() != a.phases.size()) {
      ps->expected("one phase per bracket (" + std::to_string(a.phases.size()) + ")");
    }
    for (std::size_t b = 0; b < a.phases.size(); ++b) {
      const int rungs = bracket_scheduler(a.spec.scheduler, static_cast<int>(b)).rungs;
      a.phases[b] = static_cast<int>((*ps)[b].int_in(0, rungs - 1));
    }
  } else {
    a.phases[0] = static_cast<int>(n.at("phase").int_in(0, a.spec.scheduler.rungs - 1));
  }
  a.fair = fair_from_json(n.get("fair"));
  return a;
}

std::optional<Placed> parse_opt_placed(const Node& n) {
  if (n.is_null()) return std::nullopt;
  if (!n.is_object()) n.expected("a placement entry or null");
  return placed_from_json(n.json());
}

BookJob job_from_json(const Node& n) {
  BookJob b;
  b.spec = parse_job_spec(n.at("spec"));
  b.identity = n.string_or("identity", "");
  if (auto r = n.get("run_as"); r && !r->is_null()) b.run_as = parse_run_as(*r);
  b.submit_time = n.number_or("submit_time", 0);
  b.order = n.int_or("order", 0);
  Node st = n.at("state");
  auto s = parse_lifecycle(st.as_string());
  if (!s) st.expected("a job state (queued, running, finished, failed, cancelled, stopped)");
  b.state = *s;
  b.reason = n.string_or("reason", "");
  b.held_by = n.string_or("held_by", "");
  b.held_time = n.number_or("held_time", 0);
  b.requeue_by = n.string_or("requeue_by", "");
  b.end_time = n.number_or("end_time", 0);
  if (auto e = n.get("exit_status")) b.exit_status = e->int32();
  if (auto t = n.get("log_tail")) b.log_tail = log_tail_from_json(t->json());
  if (auto p = n.get("placed")) b.placed = parse_opt_placed(*p);
  b.report_node = n.string_or("report_node", "");
  b.generation = n.int32_or("generation", 0);
  b.starts = n.int32_or("starts", 0);
  b.restoring = n.bool_or("restoring", false);
  b.done_reported = n.bool_or("done_reported", false);
  b.attained_service = n.number_or("attained_service", 0);
  if (auto obs = n.get("observations")) {
    obs->each([&](const Node& o) {
      b.observations.push_back({parse_profile_point(o), o.int32_or("count", 1)});
    });
  }
  if (auto g = n.get("gradient")) {
    b.gradient = GradientStats{g->at("grad_sqr").non_negative_number(),
                               g->at("grad_var").non_negative_number()};
  }
  b.progress = n.number_or("progress", 0);
  if (auto g = n.get("gen_start")) {  // snapshots from before it: none
    b.gen_step = g->int_or("step", -1);
    b.gen_progress = g->number_or("progress", 0);
  }
  b.step = n.int_or("step", 0);
  b.lost_steps = n.int_or("lost_steps", 0);
  b.notice = n.string_or("notice", "");
  b.reports = n.int_or("reports", 0);
  b.started_time = n.number_or("started_time", 0);
  b.last_report_time = n.number_or("last_report_time", 0);
  b.silent_restarts = static_cast<int>(n.int_or("silent_restarts", 0));
  b.peer_restarts = static_cast<int>(n.int_or("peer_restarts", 0));
  b.peer_lost_generation = n.int_or("peer_lost_generation", 0);
  // Snapshots from before the reset: every restart counts, from where the job is now.
  b.peer_retries_used = static_cast<int>(n.int_or("peer_retries_used", b.peer_restarts));
  b.peer_lost_step = n.int_or("peer_lost_step", b.step);
  if (n.json().contains("last_report")) b.last_report = n.json()["last_report"];
  b.last_report_node = n.string_or("last_report_node", "");
  b.last_report_at = n.number_or("last_report_at", 0);
  if (auto m = n.get("models")) {
    if (!m->is_object()) m->expected("an object of fitted models");
    b.models = m->json();
  }
  if (auto h = n.get("history")) {
    h->each([&](const Node& e) {
      HistoryEntry x;
      x.round = e.int_or("round", 0);
      x.time = e.number_or("time", 0);
      if (auto p = e.get("placed")) x.placed = parse_opt_placed(*p);
      b.history.push_back(std::move(x));
    });
  }
  b.fraction = n.number_or("fraction", 0);
  if (auto m = n.get("rung_metric"); m && !m->is_null()) b.rung_metric = m->as_number();
  b.fair = fair_from_json(n.get("fair"));
  if (auto f = n.get("projected_finish"); f && !f->is_null()) b.projected_finish = f->as_number();
  b.at_risk = n.bool_or("at_risk", false);
  return b;
}

}  // namespace

json JobBook::to_json() const {
  json jobs = json::array();
  for (const auto& [name, b] : jobs_) jobs.push_back(job_to_json(b));
  json apps = json::array();
  for (const auto& [name, a] : apps_) apps.push_back(app_to_json(a));
  json nodes = json::array();
  for (const auto& [name, n] : nodes_) {
    nodes.push_back({{"name", n.name},
                     {"up", n.up},
                     {"last_seen", n.last_seen},
                     {"last_check", n.last_check},
                     {"error", n.error},
                     {"delivered_round", n.delivered_round},
                     {"delivery_error", n.delivery_error}});
  }
  json offsets = json::array();
  for (const auto& [key, next] : report_next_) {
    offsets.push_back({{"node", key.first}, {"job", key.second}, {"next", next}});
  }
  json rejections = json::array();
  for (const auto& r : rejections_) {
    rejections.push_back(
        {{"job", r.job}, {"identity", r.identity}, {"time", r.time}, {"reason", r.reason}});
  }
  return {{"seq", seq_},
          {"round", round_},
          {"last_round_time", last_round_time_},
          {"next_order", next_order_},
          {"jobs", jobs},
          {"apps", apps},
          {"nodes", nodes},
          {"report_offsets", offsets},
          {"inbox", inbox_},
          {"rejections", rejections},
          {"retired", retired_},
          {"last_cluster", last_cluster_},
          {"last_allocation", last_allocation_},
          {"last_placement", last_placement_},
          {"last_reserved", last_reserved_}};
}

JobBook JobBook::from_json(const json& data, const std::string& file) {
  Node d(data, file, "data");
  JobBook b;
  b.seq_ = d.at("seq").non_negative_int();
  b.round_ = d.int_or("round", 0);
  b.last_round_time_ = d.number_or("last_round_time", 0);
  b.next_order_ = d.int_or("next_order", 1);
  if (auto jobs = d.get("jobs")) {
    jobs->each([&](const Node& j) {
      BookJob x = job_from_json(j);
      std::string name = x.spec.name;
      b.jobs_.emplace(name, std::move(x));
    });
  }
  if (auto apps = d.get("apps")) {
    apps->each([&](const Node& n) {
      BookApp x = app_from_json(n);
      std::string name = x.spec.name;
      b.apps_.emplace(name, std::move(x));
    });
  }
  if (auto nodes = d.get("nodes")) {
    nodes->each([&](const Node& n) {
      BookNode x;
      x.name = n.at("name").as_string();
      x.up = n.bool_or("up", false);
      x.last_seen = n.number_or("last_seen", 0);
      x.last_check = n.number_or("last_check", 0);
      x.error = n.string_or("error", "");
      x.delivered_round = n.int_or("delivered_round", 0);
      x.delivery_error = n.string_or("delivery_error", "");
      b.nodes_[x.name] = x;
    });
  }
  if (auto offs = d.get("report_offsets")) {
    offs->each([&](const Node& o) {
      b.report_next_[{o.at("node").as_string(), o.at("job").as_string()}] =
          o.at("next").non_negative_int();
    });
  }
  if (auto inbox = d.get("inbox")) {
    for (const auto& f : inbox->as_strings()) b.inbox_.insert(f);
  }
  if (auto rej = d.get("rejections")) {
    rej->each([&](const Node& r) {
      b.rejections_.push_back({r.at("job").as_string(), r.string_or("identity", ""),
                               r.number_or("time", 0), r.string_or("reason", "")});
    });
  }
  if (auto retired = d.get("retired")) {
    for (const auto& name : retired->as_strings()) b.retired_.insert(name);
  }
  auto keep = [&](const char* k) { return data.contains(k) ? data[k] : json(); };
  b.last_cluster_ = keep("last_cluster");
  b.last_allocation_ = keep("last_allocation");
  b.last_placement_ = keep("last_placement");
  if (auto reserved = d.get("last_reserved")) {
    for (const auto& name : reserved->as_strings()) b.last_reserved_.insert(name);
  }
  return b;
}

}  // namespace sia::ctl
