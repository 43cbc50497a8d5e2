#include <catch2/catch.hpp>

#include "channel/protocol.hpp"
#include "core/node.hpp"
#include "model/job_state.hpp"

using namespace sia::channel;
using nlohmann::json;

namespace {

template <typename T>
T round_trip(const T& m) {
  Message back = decode(encode(m));
  REQUIRE(std::holds_alternative<T>(back));
  return std::get<T>(back);
}

// The error message decode() gives for `text`.
std::string decode_error(const std::string& text) {
  try {
    decode(text);
  } catch (const ProtocolError& e) {
    CHECK(sia::to_int(e.status()) == 65);
    return e.what();
  }
  return "(decoded)";
}

}  // namespace

TEST_CASE("every message survives a round trip", "[protocol]") {
  Ready r;
  r.node = "t4-0";
  r.inventory = {"t4", 4, "10.0.0.7"};
  r.run_status = {{"node", "t4-0"}, {"jobs", json::array()}};
  r.offsets = {{"cifar", 1024}, {"bert", 0}};
  Ready r2 = round_trip(r);
  CHECK(r2.node == "t4-0");
  CHECK(r2.inventory.gpu_type == "t4");
  CHECK(r2.inventory.gpus == 4);
  CHECK(r2.inventory.address == "10.0.0.7");
  CHECK(r2.run_status == r.run_status);
  CHECK(r2.offsets == r.offsets);
  CHECK_FALSE(r2.lease);  // an older agent's READY: no lease
  r.lease = Lease{45, 130};
  r2 = round_trip(r);
  REQUIRE(r2.lease);
  CHECK(r2.lease->fence_after == 45);
  CHECK(r2.lease->grace == 130);

  Assign a;
  a.round = 12;
  a.seq = 40;
  a.placement = {{"kind", "Placement"}, {"data", {{"jobs", json::array()}}}};
  a.jobs = {{"kind", "Jobs"}};
  Assign a2 = round_trip(a);
  CHECK(a2.round == 12);
  CHECK(a2.seq == 40);
  CHECK(a2.placement == a.placement);
  CHECK(a2.jobs == a.jobs);

  Ack k;
  k.round = 12;
  k.seq = 40;
  k.ok = false;
  k.exit_status = 65;
  k.error = "placement.json: jobs[0]: bad";
  Ack k2 = round_trip(k);
  CHECK(k2.round == 12);
  CHECK(k2.seq == 40);
  CHECK_FALSE(k2.ok);
  CHECK(k2.exit_status == 65);
  CHECK(k2.error == k.error);
  CHECK(k2.plan.is_null());

  Report rep;
  rep.node = "t4-0";
  rep.lines = {{"cifar", 0, R"({"type":"progress"})"}, {"cifar", 20, R"({"type":"end"})"}};
  Report rep2 = round_trip(rep);
  REQUIRE(rep2.lines.size() == 2);
  CHECK(rep2.lines[1].job == "cifar");
  CHECK(rep2.lines[1].offset == 20);
  CHECK(rep2.lines[1].line == R"({"type":"end"})");

  Heartbeat h;
  h.node = "t4-0";
  h.jobs = {{"cifar", "running"}};
  h.busy = true;
  h.acked = {{"cifar", 20}};
  Heartbeat h2 = round_trip(h);
  CHECK(h2.node == "t4-0");
  CHECK(h2.busy);
  CHECK(h2.jobs == h.jobs);
  CHECK(h2.acked == h.acked);

  Bye b;
  b.node = "t4-0";
  b.reason = "signal";
  b.stopped = true;
  Bye b2 = round_trip(b);
  CHECK(b2.stopped);
  CHECK(b2.reason == "signal");

  for (auto kind : {RequestKind::submit, RequestKind::status, RequestKind::cancel,
                    RequestKind::nodes, RequestKind::explain}) {
    Request q;
    q.kind = kind;
    q.id = "abc";
    q.client = "alice";
    q.args = {{"jobs", {"a"}}};
    Request q2 = round_trip(q);
    CHECK(q2.kind == kind);
    CHECK(q2.id == "abc");
    CHECK(q2.client == "alice");
    CHECK(q2.args == q.args);
  }

  Reply p;
  p.id = "abc";
  p.ok = false;
  p.status = 75;
  p.error = "round lock held";
  Reply p2 = round_trip(p);
  CHECK_FALSE(p2.ok);
  CHECK(p2.status == 75);
  CHECK(p2.error == p.error);

  ErrorMessage e{"version", "unsupported"};
  CHECK(round_trip(e).code == "version");
  CHECK(type_name(Message{Request{RequestKind::cancel, "", "", json::object()}}) == "CANCEL");
}

TEST_CASE("encoded messages carry the protocol version", "[protocol]") {
  json j = json::parse(encode(Heartbeat{}));
  CHECK(j["v"] == kProtocolVersion);
  CHECK(j["type"] == "HEARTBEAT");
}

TEST_CASE("a report line that is not UTF-8 is encoded, not thrown on", "[protocol]") {
  Report r;
  r.node = "n0";
  r.lines = {{"j", 0, std::string("bad \xff\xfe bytes")}};
  std::string text;
  REQUIRE_NOTHROW(text = encode(r));
  Message m = decode(text);
  CHECK(std::get<Report>(m).lines.size() == 1);
}

TEST_CASE("malformed messages are refused with a clear error", "[protocol]") {
  CHECK(decode_error("") == "message is not valid JSON");
  CHECK(decode_error("{\"v\":1,") == "message is not valid JSON");
  CHECK(decode_error("[1,2]") == "message is not a JSON object");
  CHECK(decode_error(R"({"type":"READY"})") == "message has no protocol version \"v\"");
  CHECK(decode_error(R"({"v":"1","type":"READY"})") ==
        "message: v: expected the protocol version (an integer)");
  CHECK(decode_error(R"({"v":1})") == "message has no \"type\" string");
  CHECK(decode_error(R"({"v":1,"type":"LAUNCH"})") == "unknown message type \"LAUNCH\"");
  CHECK(decode_error(R"({"v":1,"type":"READY"})") == "READY: node: missing required field");
  CHECK(decode_error(R"({"v":1,"type":"READY","node":"../etc"})") ==
        "READY: node: expected a name of letters, digits, '.', '_' or '-', got the string "
        "\"../etc\"");
  CHECK(decode_error(R"({"v":1,"type":"READY","node":"n","inventory":{"gpus":-1}})") ==
        "READY: inventory.gpus: expected a GPU count, got the number -1");
  CHECK(decode_error(R"({"v":1,"type":"READY","node":"n","lease":30})") ==
        "READY: lease: expected an object {fence_after, grace}, got the number 30");
  CHECK(decode_error(R"({"v":1,"type":"READY","node":"n","lease":{"grace":1}})") ==
        "READY: lease.fence_after: missing required field");
  CHECK(decode_error(R"({"v":1,"type":"READY","node":"n","lease":{"fence_after":0,"grace":1}})")
            .find("READY: lease.fence_after: expected") == 0);
  CHECK(decode_error(R"({"v":1,"type":"READY","node":"n","lease":{"fence_after":3,"grace":-1}})")
            .find("READY: lease.grace: expected") == 0);
  CHECK(decode_error(R"({"v":1,"type":"ASSIGN","round":"3","seq":1,"placement":{},"jobs":{}})") ==
        "ASSIGN: round: expected an integer >= 0, got the string \"3\"");
  CHECK(decode_error(R"({"v":1,"type":"ASSIGN","round":3,"seq":-1,"placement":{},"jobs":{}})")
            .find("ASSIGN: seq:") == 0);
  CHECK(decode_error(R"({"v":1,"type":"ASSIGN","round":3,"seq":1,"placement":[],"jobs":{}})") ==
        "ASSIGN: placement: expected a Placement document, got an array");
  CHECK(decode_error(R"({"v":1,"type":"ACK","round":3,"seq":1})") ==
        "ACK: ok: missing required field");
  CHECK(decode_error(R"({"v":1,"type":"ACK","round":3,"seq":1,"ok":true,"exit_status":300})") ==
        "ACK: exit_status: expected an exit status (0 to 255), got the number 300");
  CHECK(decode_error(R"({"v":1,"type":"REPORT","node":"n","lines":{}})") ==
        "REPORT: lines: expected an array, got an object");
  CHECK(decode_error(
            R"({"v":1,"type":"REPORT","node":"n","lines":[{"job":"..","offset":0,"line":""}]})") ==
        "REPORT: lines[0].job: expected a job name, got the string \"..\"");
  CHECK(decode_error(
            R"({"v":1,"type":"REPORT","node":"n","lines":[{"job":"j","offset":1.5,"line":""}]})")
            .find("REPORT: lines[0].offset:") == 0);
  CHECK(
      decode_error(R"({"v":1,"type":"HEARTBEAT","acked":{"j":-4}})").find("HEARTBEAT: acked.j:") ==
      0);
  CHECK(decode_error(R"({"v":1,"type":"HEARTBEAT","acked":{"a/b":4}})") ==
        "HEARTBEAT: acked.a/b: not a job name");
  CHECK(decode_error(R"({"v":1,"type":"STATUS","args":[1]})") ==
        "STATUS: args: expected an object, got an array");
  CHECK(decode_error(R"({"v":1,"type":"REPLY","ok":false,"status":0})") ==
        "REPLY: status: expected a non-zero status for a failed reply, got the number 0");
}

TEST_CASE("deeply nested input is refused before it is parsed", "[protocol]") {
  std::string deep = R"({"v":1,"type":"STATUS","args":{"x":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}}";
  CHECK(decode_error(deep) == "message nested more than 64 levels deep");
  // Brackets inside strings do not count.
  std::string quoted = R"({"v":1,"type":"STATUS","args":{"x":")" + std::string(1000, '[') + "\"}}";
  CHECK_NOTHROW(decode(quoted));
}

TEST_CASE("another major version is a VersionError", "[protocol]") {
  try {
    decode(R"({"v":2,"type":"READY","node":"n"})");
    FAIL("decoded");
  } catch (const VersionError& e) {
    CHECK(e.version() == 2);
    CHECK(std::string(e.what()) == "unsupported protocol version 2 (this side speaks version 1)");
  }
}

TEST_CASE("an ASSIGN's jobs say whom each runs as; an older controller's say nothing",
          "[protocol]") {
  const json spec = {{"name", "cifar"}, {"model", "cifar10"}, {"command", {"train"}}};
  json with = spec;
  with["state"] = {
      {"run_as", {{"user", "alice"}, {"submitter", "client:alice"}, {"admin", false}}}};
  Assign a;
  a.round = 3;
  a.seq = 1;
  a.jobs = {{"kind", "Jobs"}, {"data", {{"jobs", {with, spec}}}}};
  Assign back = round_trip(a);
  const json& jobs = back.jobs["data"]["jobs"];
  sia::JobState s = sia::parse_job_state(sia::Node(jobs[0], "ASSIGN", "jobs[0]"));
  REQUIRE(s.run_as);
  CHECK(*s.run_as == sia::RunAs{"alice", "client:alice", false});
  CHECK_FALSE(sia::parse_job_state(sia::Node(jobs[1], "ASSIGN", "jobs[1]")).run_as);
  // The field round-trips through a Jobs document (what sia-run apply reads).
  CHECK(sia::job_state_to_json(s)["state"]["run_as"] == with["state"]["run_as"]);
  json bad = spec;
  bad["state"] = {{"run_as", {{"user", "../root"}}}};
  try {
    sia::parse_job_state(sia::Node(bad, "ASSIGN", "jobs[0]"));
    FAIL("a bad account name was accepted");
  } catch (const sia::Error& e) {
    CHECK(std::string(e.what()).find(
              "ASSIGN: jobs[0].state.run_as.user: expected an account name") == 0);
  }
}

TEST_CASE("unknown fields are ignored", "[protocol]") {
  Message m = decode(R"({"v":1,"type":"HEARTBEAT","node":"n","future":{"x":1}})");
  CHECK(std::get<Heartbeat>(m).node == "n");
}

TEST_CASE("random bytes never crash the decoder", "[protocol]") {
  std::string seed = encode(Report{"n0", {{"j", 3, "{\"a\":1}"}}});
  std::uint32_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    std::string s = seed;
    for (int k = 0; k < 4; ++k) {
      x = x * 1664525u + 1013904223u;
      s[x % s.size()] = static_cast<char>(x >> 24);
    }
    try {
      decode(s);
    } catch (const ProtocolError&) {
    }
  }
  SUCCEED();
}

TEST_CASE("peer names", "[protocol]") {
  CHECK(valid_peer_name("t4-0"));
  CHECK(valid_peer_name("node_1.example.org"));
  CHECK_FALSE(valid_peer_name(""));
  CHECK_FALSE(valid_peer_name(".hidden"));
  CHECK_FALSE(valid_peer_name("a/b"));
  CHECK_FALSE(valid_peer_name("a b"));
  CHECK_FALSE(valid_peer_name(std::string(254, 'a')));
}

TEST_CASE("LOG_FETCH, LOG and LOGS survive a round trip", "[protocol]") {
  LogFetch f{"7", "cifar", 2, 20, 0, 1 << 20};
  LogFetch f2 = round_trip(f);
  CHECK(f2.id == "7");
  CHECK(f2.job == "cifar");
  CHECK(f2.rank == 2);
  CHECK(f2.tail == 20);
  CHECK(f2.limit == 1 << 20);
  LogData d{"t4-0", "7", true, 0, {{"text", "boom\n"}, {"next", 5}}, ""};
  LogData d2 = round_trip(d);
  CHECK(d2.node == "t4-0");
  CHECK(d2.log["text"] == "boom\n");
  LogData no{"t4-0", "8", false, 66, nullptr, "no log here"};
  LogData no2 = round_trip(no);
  CHECK_FALSE(no2.ok);
  CHECK(no2.status == 66);
  CHECK(no2.error == "no log here");
  Heartbeat h{"t4-0", {{"f", "failed"}}, false, {}, {{"jobs", json::array()}}};
  CHECK(round_trip(h).run_status == json{{"jobs", json::array()}});
  CHECK(round_trip(Heartbeat{}).run_status.is_null());
  Request q{RequestKind::logs, "r1", "", {{"job", "cifar"}, {"rank", 0}}};
  Request q2 = round_trip(q);
  CHECK(q2.kind == RequestKind::logs);
  CHECK(type_name(q2) == "LOGS");
  CHECK(type_name(Message(f)) == "LOG_FETCH");
  CHECK(type_name(Message(d)) == "LOG");
  CHECK(decode_error(R"({"v":1,"type":"LOG","node":"n","id":"1","ok":false,"status":0})") ==
        "LOG: status: expected a non-zero status for a failed answer, got the number 0");
  CHECK(decode_error(R"({"v":1,"type":"LOG_FETCH","id":"1","job":"../x","rank":0,)"
                     R"("offset":0,"limit":1})")
            .find("job") != std::string::npos);
}
