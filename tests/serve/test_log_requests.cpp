// lib/serve/log_requests: a remote client's LOGS request planned from the daemon's book.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "ctl/ctl_test_util.hpp"
#include "ctl/state_store.hpp"
#include "serve/log_requests.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl::test;
using nlohmann::json;
using sia::test::error_of;

TEST_CASE("a LOGS request goes to the node of the rank, and its answer becomes a JobLog",
          "[logs]") {
  TempDir dir;
  ctl::StateStore store(dir / "state");
  ctl::JobBook book;
  book.apply(ctl::make_submit("f", "local:me", 100, {spec("a")}));
  book.apply(placing_round(1, 160, "a", {{"t4-0", {0}}, {"t4-1", {1}}}));
  channel::Request r{channel::RequestKind::logs, "1", "", {{"job", "a"}, {"rank", 1}}};
  const channel::Identity ipc;  // no CURVE: the controller's own user
  channel::DeferredLog plan = serve::plan_log_request(book, store, ipc, r);
  CHECK(plan.node == "t4-1");
  CHECK(plan.fetch.job == "a");
  CHECK(plan.fetch.rank == 1);
  CHECK(plan.fetch.tail == -1);
  CHECK(plan.fetch.limit == 1 << 20);
  json doc = plan.document({{"offset", 0}, {"next", 5}, {"size", 5}, {"text", "boom\n"}});
  CHECK(doc["kind"] == "JobLog");
  CHECK(doc["data"]["node"] == "t4-1");
  CHECK(doc["data"]["text"] == "boom\n");

  auto status = [&](json args) {
    channel::Request q{channel::RequestKind::logs, "2", "", std::move(args)};
    return error_of([&] { serve::plan_log_request(book, store, ipc, q); }).first;
  };
  CHECK(status({{"job", "nosuch"}}) == 66);
  CHECK(status({{"job", "a"}, {"rank", 2}}) == 64);
  CHECK(status({{"job", "a"}, {"rank", "x"}}) == 65);
  CHECK(status(json::object()) == 65);

  // Owner-only: another client's key is refused (77), an admin key is not.
  channel::Identity bob{channel::Identity::Kind::client, "bob", "K", true};
  auto [s77, message] = error_of([&] { serve::plan_log_request(book, store, bob, r); });
  CHECK(s77 == 77);
  CHECK(message ==
        "LOGS: job \"a\" belongs to local:me; client:bob may not act on it (only its "
        "submitter or an admin key may)");
  bob.admin = true;
  CHECK(serve::plan_log_request(book, store, bob, r).node == "t4-1");
}
