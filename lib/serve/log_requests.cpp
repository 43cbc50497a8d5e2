#include "serve/log_requests.hpp"

#include "serve/client_service.hpp"

#include "core/error.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/job_log.hpp"
#include "exec/rank_log.hpp"

namespace sia::serve {

using nlohmann::json;

namespace {

// An integer argument in [lo, hi], or `fallback` when it is absent.
std::int64_t int_arg(const json& args, const char* key, std::int64_t fallback, std::int64_t lo,
                     std::int64_t hi) {
  if (!args.contains(key)) return fallback;
  const json& v = args[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
    throw Error(ExitStatus::data, std::string("LOGS: ") + key + ": expected an integer from " +
                                      std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v.get<std::int64_t>();
}

}  // namespace

channel::DeferredLog plan_log_request(const ctl::JobBook& book, const ctl::StateStore& store,
                                      const channel::Identity& who,
                                      const channel::Request& request) {
  const json& args = request.args;
  if (!args.is_object() || !args.contains("job") || !args["job"].is_string()) {
    throw Error(ExitStatus::data, "LOGS: job: expected a job name");
  }
  ctl::LogQuery q;
  q.job = args["job"].get<std::string>();
  q.rank = static_cast<int>(int_arg(args, "rank", 0, 0, 1 << 30));
  q.tail = static_cast<int>(int_arg(args, "tail", -1, -1, 1 << 30));
  q.offset = int_arg(args, "offset", 0, 0, std::int64_t{1} << 62);
  auto pending = ctl::pending_requests(store);
  require_owner(who, q.job, job_owner(book, pending, q.job), "LOGS");
  ctl::RankLogSource source = ctl::locate_rank_log(book, pending, q);
  channel::DeferredLog plan;
  plan.node = source.node;
  plan.fetch.job = q.job;
  plan.fetch.rank = q.rank;
  plan.fetch.tail = q.tail;
  plan.fetch.offset = q.offset;
  plan.fetch.limit = exec::kMaxLogRead;
  plan.document = [q, source](const json& run_log) {
    return ctl::job_log_document(q, source, run_log);
  };
  return plan;
}

}  // namespace sia::serve
