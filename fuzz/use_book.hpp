// What the controller and its clients do with a JobBook they loaded: the scheduler's view
// of every active job, the snapshot writer, and the status, node, history and explain
// documents -- so the fuzz targets that build a book from untrusted bytes reach every
// reader of what they put in it. And the book the report targets start from.
// Thread-safety: as JobBook (one thread).
#pragma once

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "ctl/client_docs.hpp"
#include "ctl/history.hpp"
#include "ctl/job_book.hpp"
#include "model/job_state.hpp"

namespace sia::fuzz {

// A book where job "fuzz" (cifar10) runs on node "n0", GPUs 0 and 1 of type t4, started by
// round 1 (its generation).
inline ctl::JobBook running_book() {
  using nlohmann::json;
  JobSpec spec;
  spec.name = "fuzz";
  spec.model = "cifar10";
  spec.command = {"true"};
  ctl::JobBook book;
  const json placed = {
      {"name", "fuzz"},    {"gpu_type", "t4"}, {"nodes", {{{"name", "n0"}, {"gpus", {0, 1}}}}},
      {"batch_size", 256}, {"local_bsz", 128}, {"accum_steps", 1}};
  const json plan = {{"actions", {{{"job", "fuzz"}, {"action", "start"}, {"round", 1}}}}};
  for (const json& r : {ctl::make_submit("inbox-1", "local:fuzz", 1000, {spec}),
                        ctl::make_round(1, 1010, json::object(), json::object(),
                                        json{{"jobs", {placed}}}, json::object()),
                        ctl::make_delivered(1, "n0", true, "", plan)}) {
    if (!book.apply(r)) std::abort();
  }
  return book;
}

inline void use_book(const ctl::JobBook& book) {
  const double now = book.last_round_time() + 60;
  for (const auto* b : book.active()) job_state_to_json(book.job_state(*b, now)).dump();
  book.to_json().dump();
  ctl::job_status_list(book, {}, {}, now, 30).dump();
  ctl::node_list(book, now).dump();
  ctl::history_csv(ctl::job_history(book, now));
  for (const auto& [name, b] : book.jobs()) ctl::job_explanation(book, {}, name, now, 30, 3).dump();
}

}  // namespace sia::fuzz
