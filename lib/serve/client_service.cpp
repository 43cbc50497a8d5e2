#include "serve/client_service.hpp"

#include <algorithm>
#include <optional>

#include "core/cluster.hpp"
#include "core/error.hpp"
#include "core/error_list.hpp"
#include "core/node.hpp"
#include "ctl/admission.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/history.hpp"
#include "ctl/job_requests.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/submission.hpp"

namespace sia::serve {

using nlohmann::json;

namespace {

std::vector<std::string> names_of(const json& args, const char* what) {
  std::vector<std::string> out;
  if (!args.is_object() || !args.contains("jobs")) return out;
  const json& jobs = args["jobs"];
  if (!jobs.is_array())
    throw Error(ExitStatus::data, std::string(what) + ": jobs: expected a list");
  for (const auto& j : jobs) {
    if (!j.is_string()) {
      throw Error(ExitStatus::data, std::string(what) + ": jobs: expected job names");
    }
    out.push_back(j.get<std::string>());
  }
  return out;
}

}  // namespace

std::string recorded_identity(const channel::Identity& who) {
  return who.describe();
}

std::string job_owner(const ctl::JobBook& book, const std::vector<ctl::PendingRequest>& pending,
                      const std::string& job) {
  if (const ctl::BookJob* b = book.find(job)) return b->identity;
  if (const ctl::BookApp* a = book.find_app(job)) return a->identity;  // cancel APP
  const ctl::PendingRequest* request = nullptr;
  if (ctl::find_pending_app(pending, job, &request)) return request->identity;  // in the inbox
  for (const auto& p : pending) {
    if (p.type == "submit" && std::find(p.jobs.begin(), p.jobs.end(), job) != p.jobs.end()) {
      return p.identity;
    }
  }
  return "";
}

void require_owner(const channel::Identity& who, const std::string& job, const std::string& owner,
                   std::string_view what) {
  if (owner.empty() || !who.authenticated || who.admin) return;
  const std::string id = who.user_id();
  if (owner == id || owner.rfind(id + " ", 0) == 0) return;
  const std::string by = owner.substr(0, owner.find(' '));
  throw Error(ExitStatus::no_perm, std::string(what) + ": job \"" + job + "\" belongs to " + by +
                                       "; " + id +
                                       " may not act on it (only its submitter or an admin "
                                       "key may)");
}

ClientService::ClientService(const ctl::Settings& config, const ctl::StateStore& store,
                             ctl::JobBook& book, std::function<double()> now)
    : config_(config), store_(store), book_(book), now_(std::move(now)) {
  if (!now_) now_ = ctl::wall_clock;
}

bool ClientService::take_round_wanted() {
  bool w = round_wanted_;
  round_wanted_ = false;
  return w;
}

channel::Reply ClientService::handle(const channel::Identity& who,
                                     const channel::Request& request) {
  channel::Reply reply;
  reply.id = request.id;
  const double now = now_();
  switch (request.kind) {
    case channel::RequestKind::submit:
      reply.document = submit(who, request.args);
      break;
    case channel::RequestKind::cancel:
    case channel::RequestKind::hold:
    case channel::RequestKind::release:
    case channel::RequestKind::requeue:
      reply.document = job_request(who, *job_request_of(request.kind), request.args);
      break;
    case channel::RequestKind::status:
      reply.document = ctl::job_status_list(book_, ctl::pending_requests(store_),
                                            names_of(request.args, "STATUS"), now,
                                            config_.controller.silent_after);
      break;
    case channel::RequestKind::nodes:
      reply.document = ctl::node_list(book_, now, live_nodes_ ? live_nodes_() : json());
      break;
    case channel::RequestKind::history:
      reply.document = ctl::job_history(book_, now);
      break;
    case channel::RequestKind::logs:  // the hub's log planner answers these
      throw Error(ExitStatus::unavailable, "LOGS: this controller hands out no logs");
    case channel::RequestKind::explain: {
      if (!request.args.is_object() || !request.args.contains("job") ||
          !request.args["job"].is_string()) {
        throw Error(ExitStatus::data, "EXPLAIN: job: expected a job name");
      }
      const std::string job = request.args["job"].get<std::string>();
      auto pending = ctl::pending_requests(store_);
      require_owner(who, job, job_owner(book_, pending, job), "EXPLAIN");
      reply.document =
          ctl::job_explanation(book_, pending, job, now, config_.controller.silent_after,
                               config_.controller.peer_retries);
      break;
    }
  }
  return reply;
}

json ClientService::submit(const channel::Identity& who, const json& args) {
  if (!args.is_object() || !args.contains("jobs") || !args["jobs"].is_array() ||
      args["jobs"].empty()) {
    throw Error(ExitStatus::data, "SUBMIT: jobs: expected a non-empty list of JobSpecs");
  }
  if (!catalog_) {
    catalog_ = std::make_unique<Catalog>(
        config_.controller.catalog.empty() ? default_catalog_dir() : config_.controller.catalog);
  }
  // The cluster as the next round will read it: a job it can never hold is refused now.
  std::optional<Cluster> cluster;
  if (!config_.controller.cluster.empty()) cluster = read_cluster(config_.controller.cluster);
  // The admitted jobs read and these recorded under the admission lock, which a local
  // `sia-ctl submit` takes too (ctl/admission.hpp).
  const exec::StateLock admission = store_.admission_lock("sia-ctl serve: SUBMIT");
  auto pending = ctl::pending_requests(store_);
  std::vector<JobSpec> specs;
  std::vector<std::string> list;
  ErrorList errors;  // every job's mistakes at once
  for (std::size_t i = 0; i < args["jobs"].size(); ++i) {
    errors.check([&] {
      const json& j = args["jobs"][i];
      const bool doc = j.is_object() && j.contains("kind") && j.contains("data");
      const std::string where = "SUBMIT: jobs[" + std::to_string(i) + "]";
      JobSpec s =
          parse_job_spec(Node(doc ? j["data"] : j, "SUBMIT", "jobs[" + std::to_string(i) + "]"));
      resolve_deadline(s, now_(), where);
      ctl::validate_submission(s, *catalog_, where, ctl::job_limits(config_.controller));
      if (cluster) ctl::check_admissible(s, *catalog_, *cluster, where);
      list.push_back(s.name);
      specs.push_back(std::move(s));
    });
  }
  errors.throw_if_any();
  ctl::Submission sub{std::move(specs), {}};
  if (auto apps = Node(args, "SUBMIT", "").get("apps")) {
    apps->each([&](const Node& a) { sub.apps.push_back(parse_app_spec(a)); });
  }
  ctl::validate_apps(sub, "SUBMIT");  // no name twice in it
  ctl::check_names_free(book_, pending, sub);
  if (auto o = Node(args, "SUBMIT", "").get("or_best_effort")) sub.or_best_effort = o->as_bool();
  ctl::admit_submission(sub, book_, pending, config_, *catalog_, store_.path(ctl::kProfilesFile),
                        now_());
  // A dry run (submit --dry-run): every check above, nothing recorded.
  if (args.contains("dry_run") && args["dry_run"] == true) {
    return ctl::envelope("Jobs", {{"jobs", args["jobs"]}});
  }
  bool idle = true;
  for (const ctl::BookJob* b : book_.active()) idle = idle && !b->placed;
  const double now = now_();
  const std::string identity = recorded_identity(who);
  // Whom the jobs run as on the nodes; an ipc:// peer (unauthenticated, the controller's
  // own user) counts as an admin.
  const RunAs run_as{who.account, who.user_id(), who.admin || !who.authenticated};
  store_.commit(book_,
                {ctl::make_submit(request_name(now), identity, now, sub.jobs, sub.apps, run_as)});
  if (idle) round_wanted_ = true;
  return ctl::job_status_list(book_, pending, list, now, config_.controller.silent_after);
}

std::string ClientService::request_name(double now) {
  return "channel-" + std::to_string(static_cast<std::int64_t>(now * 1000)) + "-" +
         std::to_string(++requests_);
}

json ClientService::job_request(const channel::Identity& who, ctl::JobRequest request,
                                const json& args) {
  const std::string what = channel::to_string(request_kind_of(request));
  std::vector<std::string> jobs = names_of(args, what.c_str());
  if (jobs.empty()) throw Error(ExitStatus::data, what + ": jobs: expected job names");
  auto pending = ctl::pending_requests(store_);
  const double now = now_();
  ctl::check_job_request(book_, pending, request, jobs);
  for (const auto& j : jobs) require_owner(who, j, job_owner(book_, pending, j), what);
  // Jobs the book has get the record in the journal now; a job still waiting as a file in
  // STATE/inbox (submitted locally, not yet taken in) gets a request file after it there,
  // so the next round takes in both, in order.
  std::vector<std::string> known, waiting;
  for (const auto& j : jobs) (book_.find(j) || book_.find_app(j) ? known : waiting).push_back(j);
  const std::string identity = recorded_identity(who);
  if (!waiting.empty()) {
    store_.write_inbox(
        ctl::inbox_request(ctl::to_string(request), identity, now, {{"jobs", waiting}}));
    pending.push_back({ctl::to_string(request), identity, now, waiting, {}, {}});
  }
  if (!known.empty()) {
    store_.commit(book_, {ctl::make_job_request(request, request_name(now), identity, now, known)});
  }
  return ctl::job_status_list(book_, pending, jobs, now, config_.controller.silent_after);
}

channel::RequestKind request_kind_of(ctl::JobRequest request) {
  switch (request) {
    case ctl::JobRequest::cancel:
      return channel::RequestKind::cancel;
    case ctl::JobRequest::hold:
      return channel::RequestKind::hold;
    case ctl::JobRequest::release:
      return channel::RequestKind::release;
    case ctl::JobRequest::requeue:
      return channel::RequestKind::requeue;
  }
  return channel::RequestKind::cancel;
}

std::optional<ctl::JobRequest> job_request_of(channel::RequestKind kind) {
  for (auto r : {ctl::JobRequest::cancel, ctl::JobRequest::hold, ctl::JobRequest::release,
                 ctl::JobRequest::requeue}) {
    if (request_kind_of(r) == kind) return r;
  }
  return std::nullopt;
}

}  // namespace sia::serve
