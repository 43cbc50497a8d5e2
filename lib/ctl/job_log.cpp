#include "ctl/job_log.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "exec/rank_log.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

// The placement the job runs with, else the last one it ran with.
std::optional<Placed> last_placed(const BookJob& b) {
  if (b.placed) return b.placed;
  for (auto it = b.history.rbegin(); it != b.history.rend(); ++it) {
    if (it->placed) return it->placed;
  }
  return std::nullopt;
}

}  // namespace

RankLogSource locate_rank_log(const JobBook& book, const std::vector<PendingRequest>& pending,
                              const LogQuery& q, bool down_ok) {
  const std::string name = "job \"" + q.job + "\"";
  const BookJob* b = book.find(q.job);
  if (!b) {
    for (const auto& p : pending) {
      if (p.type == "submit" && std::count(p.jobs.begin(), p.jobs.end(), q.job)) {
        throw Error(ExitStatus::no_input, name + " has not started yet: no log");
      }
    }
    throw Error(ExitStatus::no_input, name + " is not known to the controller");
  }
  auto placed = last_placed(*b);
  if (!placed || placed->nodes.empty()) {
    throw Error(ExitStatus::no_input, name + " has never started: no log yet");
  }
  const int world = placed->gpus();
  if (q.rank < 0 || q.rank >= world) {
    throw exec::rank_out_of_range(q.job, q.rank, world);
  }
  RankLogSource s;
  s.state = b->state;
  int first = 0;
  for (const auto& ng : placed->nodes) {
    const int count = static_cast<int>(ng.gpus.size());
    if (q.rank < first + count) {
      s.node = ng.node;
      break;
    }
    first += count;
  }
  if (auto n = book.nodes().find(s.node);
      n != book.nodes().end() && n->second.last_check > 0 && !n->second.up) {
    if (down_ok) {
      s.node_down = true;
      s.down_reason = n->second.error;
      return s;
    }
    throw Error(ExitStatus::unavailable,
                "node " + s.node + " is down" +
                    (n->second.error.empty() ? "" : " (" + n->second.error + ")") +
                    ": cannot read rank " + std::to_string(q.rank) + "'s log of " + name);
  }
  return s;
}

std::vector<std::string> sia_run_log_args(const LogQuery& q) {
  std::vector<std::string> a = {q.job, "--rank", std::to_string(q.rank)};
  if (q.tail >= 0) {
    a.insert(a.end(), {"--tail", std::to_string(q.tail)});
  } else {
    a.insert(a.end(), {"--offset", std::to_string(std::max<std::int64_t>(q.offset, 0))});
  }
  a.insert(a.end(), {"-o", "json"});
  return a;
}

bool ranks_ended(const json& d) {
  auto state = parse_lifecycle(d.value("state", std::string()));
  if (state && is_ended(*state)) return true;
  const json run = d.value("run_state", json());
  return run == "finished" || run == "failed";
}

json job_log_document(const LogQuery& q, const RankLogSource& s, const json& d) {
  auto num = [&](const char* k) {
    return d.contains(k) && d[k].is_number_integer() ? d[k].get<std::int64_t>() : 0;
  };
  return envelope(
      "JobLog",
      {{"job", q.job},
       {"rank", q.rank},
       {"node", s.node},
       {"state", to_string(s.state)},
       {"run_state", d.contains("state") && d["state"].is_string() ? d["state"] : json(nullptr)},
       {"offset", num("offset")},
       {"next", num("next")},
       {"size", num("size")},
       {"truncated", d.value("truncated", false)},
       {"text", d.value("text", std::string())}});
}

}  // namespace sia::ctl
