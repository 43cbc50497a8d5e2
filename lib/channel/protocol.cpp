#include "channel/protocol.hpp"

#include "core/json_limits.hpp"
#include "core/names.hpp"

#include <limits>
#include <type_traits>

#include "core/node.hpp"
#include "exec/state_dir.hpp"

namespace sia::channel {

using nlohmann::json;

namespace {

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json offsets_json(const Offsets& o) {
  json out = json::object();
  for (const auto& [job, off] : o) out[job] = off;
  return out;
}

struct Encoder {
  json operator()(const Ready& m) const {
    json j{{"type", "READY"},
           {"node", m.node},
           {"inventory",
            {{"gpu_type", m.inventory.gpu_type},
             {"gpus", m.inventory.gpus},
             {"address", m.inventory.address}}},
           {"run_status", m.run_status},
           {"offsets", offsets_json(m.offsets)}};
    if (m.lease) j["lease"] = {{"fence_after", m.lease->fence_after}, {"grace", m.lease->grace}};
    return j;
  }
  json operator()(const Assign& m) const {
    return {{"type", "ASSIGN"},
            {"round", m.round},
            {"seq", m.seq},
            {"placement", m.placement},
            {"jobs", m.jobs}};
  }
  json operator()(const Ack& m) const {
    json j{{"type", "ACK"},
           {"round", m.round},
           {"seq", m.seq},
           {"ok", m.ok},
           {"exit_status", m.exit_status},
           {"plan", m.plan},
           {"run_status", m.run_status}};
    if (!m.error.empty()) j["error"] = m.error;
    return j;
  }
  json operator()(const Report& m) const {
    json lines = json::array();
    for (const auto& l : m.lines) {
      lines.push_back({{"job", l.job}, {"offset", l.offset}, {"line", l.line}});
    }
    return {{"type", "REPORT"}, {"node", m.node}, {"lines", std::move(lines)}};
  }
  json operator()(const Heartbeat& m) const {
    json j{{"type", "HEARTBEAT"}, {"busy", m.busy}, {"jobs", m.jobs}};
    if (!m.node.empty()) j["node"] = m.node;
    j["acked"] = offsets_json(m.acked);
    if (!m.run_status.is_null()) j["run_status"] = m.run_status;
    return j;
  }
  json operator()(const Bye& m) const {
    json j{{"type", "BYE"}, {"reason", m.reason}, {"stopped", m.stopped}};
    if (!m.node.empty()) j["node"] = m.node;
    if (!m.run_status.is_null()) j["run_status"] = m.run_status;
    return j;
  }
  json operator()(const Request& m) const {
    json j{{"type", to_string(m.kind)}, {"id", m.id}, {"args", m.args}};
    if (!m.client.empty()) j["client"] = m.client;
    return j;
  }
  json operator()(const Reply& m) const {
    json j{{"type", "REPLY"}, {"id", m.id}, {"ok", m.ok}, {"status", m.status}};
    j["document"] = m.document;
    if (!m.error.empty()) j["error"] = m.error;
    return j;
  }
  json operator()(const ErrorMessage& m) const {
    return {{"type", "ERROR"}, {"code", m.code}, {"error", m.error}};
  }
  json operator()(const LogFetch& m) const {
    return {{"type", "LOG_FETCH"}, {"id", m.id},         {"job", m.job},    {"rank", m.rank},
            {"tail", m.tail},      {"offset", m.offset}, {"limit", m.limit}};
  }
  json operator()(const LogData& m) const {
    json j{{"type", "LOG"}, {"node", m.node},     {"id", m.id},
           {"ok", m.ok},    {"status", m.status}, {"log", m.log}};
    if (!m.error.empty()) j["error"] = m.error;
    return j;
  }
};

// Field readers on top of sia::Node, whose errors already say "TYPE: field: expected ...".
std::string name_field(const Node& obj, std::string_view key, bool required) {
  auto n = obj.get(key);
  if (!n) {
    if (required) obj.at(key);  // throws "missing required field"
    return "";
  }
  std::string s = n->as_string();
  if (!valid_peer_name(s)) n->expected("a name of letters, digits, '.', '_' or '-'");
  return s;
}

std::string job_name(const Node& n) {
  std::string s = n.as_string();
  if (!valid_job_name(s)) n.expected("a job name");
  return s;
}

std::int64_t offset_value(const Node& n) {
  std::int64_t v = n.non_negative_int();
  return v;
}

Offsets read_offsets(const Node& obj, std::string_view key) {
  Offsets out;
  auto n = obj.get(key);
  if (!n) return out;
  if (!n->is_object()) n->expected("an object of job: offset");
  for (const auto& job : n->keys()) {
    Node v = n->at(job);
    if (!valid_job_name(job)) v.fail("not a job name");
    out[job] = offset_value(v);
  }
  return out;
}

json object_or_null(const Node& obj, std::string_view key) {
  auto n = obj.get(key);
  if (!n) return nullptr;
  if (!n->is_object()) n->expected("an object");
  return n->json();
}

int status_value(const Node& n) {
  std::int64_t v = n.as_int();
  if (v < 0 || v > 255) n.expected("an exit status (0 to 255)");
  return static_cast<int>(v);
}

std::optional<RequestKind> request_kind(std::string_view t) {
  if (t == "SUBMIT") return RequestKind::submit;
  if (t == "STATUS") return RequestKind::status;
  if (t == "CANCEL") return RequestKind::cancel;
  if (t == "HOLD") return RequestKind::hold;
  if (t == "RELEASE") return RequestKind::release;
  if (t == "REQUEUE") return RequestKind::requeue;
  if (t == "NODES") return RequestKind::nodes;
  if (t == "EXPLAIN") return RequestKind::explain;
  if (t == "HISTORY") return RequestKind::history;
  if (t == "LOGS") return RequestKind::logs;
  return std::nullopt;
}

Message decode_object(const Node& m, const std::string& type) {
  if (type == "READY") {
    Ready r;
    r.node = name_field(m, "node", true);
    if (auto inv = m.get("inventory")) {
      if (!inv->is_object()) inv->expected("an object");
      r.inventory.gpu_type = inv->string_or("gpu_type", "");
      std::int64_t gpus = inv->int_or("gpus", 0);
      if (gpus < 0 || gpus > 1 << 16) inv->at("gpus").expected("a GPU count");
      r.inventory.gpus = static_cast<int>(gpus);
      r.inventory.address = inv->string_or("address", "");
    }
    json rs = object_or_null(m, "run_status");
    r.run_status = rs.is_null() ? json::object() : rs;
    r.offsets = read_offsets(m, "offsets");
    if (auto lease = m.get("lease")) {
      if (!lease->is_object()) lease->expected("an object {fence_after, grace}");
      r.lease = Lease{lease->at("fence_after").positive_number(),
                      lease->at("grace").non_negative_number()};
    }
    return r;
  }
  if (type == "ASSIGN") {
    Assign a;
    a.round = m.at("round").non_negative_int();
    a.seq = m.at("seq").non_negative_int();
    Node p = m.at("placement");
    if (!p.is_object()) p.expected("a Placement document");
    a.placement = p.json();
    Node j = m.at("jobs");
    if (!j.is_object()) j.expected("a Jobs document");
    a.jobs = j.json();
    return a;
  }
  if (type == "ACK") {
    Ack a;
    a.round = m.at("round").non_negative_int();
    a.seq = m.at("seq").non_negative_int();
    a.ok = m.at("ok").as_bool();
    a.exit_status = m.has("exit_status") ? status_value(m.at("exit_status")) : 0;
    a.plan = object_or_null(m, "plan");
    a.run_status = object_or_null(m, "run_status");
    a.error = m.string_or("error", "");
    return a;
  }
  if (type == "REPORT") {
    Report r;
    r.node = name_field(m, "node", true);
    Node lines = m.at("lines");
    if (!lines.is_array()) lines.expected("an array");
    r.lines.reserve(lines.size());
    lines.each([&](const Node& l) {
      ReportLine x;
      x.job = job_name(l.at("job"));
      x.offset = offset_value(l.at("offset"));
      x.line = l.at("line").as_string();
      r.lines.push_back(std::move(x));
    });
    return r;
  }
  if (type == "HEARTBEAT") {
    Heartbeat h;
    h.node = name_field(m, "node", false);
    if (auto jobs = m.get("jobs")) {
      if (!jobs->is_object()) jobs->expected("an object of job: state");
      h.jobs = jobs->json();
    }
    h.busy = m.bool_or("busy", false);
    h.acked = read_offsets(m, "acked");
    h.run_status = object_or_null(m, "run_status");
    return h;
  }
  if (type == "BYE") {
    Bye b;
    b.node = name_field(m, "node", false);
    b.reason = m.string_or("reason", "");
    b.stopped = m.bool_or("stopped", false);
    b.run_status = object_or_null(m, "run_status");
    return b;
  }
  if (auto kind = request_kind(type)) {
    Request r;
    r.kind = *kind;
    r.id = m.string_or("id", "");
    r.client = name_field(m, "client", false);
    if (auto args = m.get("args")) {
      if (!args->is_object()) args->expected("an object");
      r.args = args->json();
    }
    return r;
  }
  if (type == "REPLY") {
    Reply r;
    r.id = m.string_or("id", "");
    r.ok = m.at("ok").as_bool();
    r.status = m.has("status") ? status_value(m.at("status")) : (r.ok ? 0 : 70);
    if (m.json().contains("document")) r.document = m.json().at("document");
    r.error = m.string_or("error", "");
    if (!r.ok && r.status == 0) m.at("status").expected("a non-zero status for a failed reply");
    return r;
  }
  if (type == "LOG_FETCH") {
    LogFetch f;
    f.id = m.at("id").as_string();
    f.job = job_name(m.at("job"));
    f.rank = m.at("rank").non_negative_int32();
    std::int64_t tail = m.int_or("tail", -1);
    if (tail < -1 || tail > 1 << 30) m.at("tail").expected("a line count, or -1");
    f.tail = static_cast<int>(tail);
    f.offset = offset_value(m.at("offset"));
    f.limit = m.at("limit").non_negative_int();
    return f;
  }
  if (type == "LOG") {
    LogData d;
    d.node = name_field(m, "node", true);
    d.id = m.at("id").as_string();
    d.ok = m.at("ok").as_bool();
    d.status = m.has("status") ? status_value(m.at("status")) : (d.ok ? 0 : 70);
    d.log = object_or_null(m, "log");
    d.error = m.string_or("error", "");
    if (!d.ok && d.status == 0) m.at("status").expected("a non-zero status for a failed answer");
    return d;
  }
  if (type == "ERROR") {
    ErrorMessage e;
    e.code = m.string_or("code", "");
    e.error = m.string_or("error", "");
    return e;
  }
  std::string t = type.size() > 40 ? type.substr(0, 37) + "..." : type;
  throw ProtocolError("unknown message type \"" + t + "\"");
}

}  // namespace

const char* to_string(RequestKind k) {
  switch (k) {
    case RequestKind::submit:
      return "SUBMIT";
    case RequestKind::status:
      return "STATUS";
    case RequestKind::cancel:
      return "CANCEL";
    case RequestKind::hold:
      return "HOLD";
    case RequestKind::release:
      return "RELEASE";
    case RequestKind::requeue:
      return "REQUEUE";
    case RequestKind::nodes:
      return "NODES";
    case RequestKind::explain:
      return "EXPLAIN";
    case RequestKind::history:
      return "HISTORY";
    case RequestKind::logs:
      return "LOGS";
  }
  return "?";
}

bool valid_peer_name(std::string_view name) {
  return valid_node_name(name);
}

std::string encode(const Message& message) {
  json j = std::visit(Encoder{}, message);
  j["v"] = kProtocolVersion;
  return dump(j);
}

bool says_ready(std::string_view frame) {
  return frame.find(R"("type":"READY")") != std::string_view::npos;
}

std::string type_name(const Message& message) {
  return std::visit(
      [](const auto& m) -> std::string {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Ready>) return "READY";
        if constexpr (std::is_same_v<T, Assign>) return "ASSIGN";
        if constexpr (std::is_same_v<T, Ack>) return "ACK";
        if constexpr (std::is_same_v<T, Report>) return "REPORT";
        if constexpr (std::is_same_v<T, Heartbeat>) return "HEARTBEAT";
        if constexpr (std::is_same_v<T, Bye>) return "BYE";
        if constexpr (std::is_same_v<T, Request>) return to_string(m.kind);
        if constexpr (std::is_same_v<T, Reply>) return "REPLY";
        if constexpr (std::is_same_v<T, ErrorMessage>) return "ERROR";
        if constexpr (std::is_same_v<T, LogFetch>) return "LOG_FETCH";
        if constexpr (std::is_same_v<T, LogData>) return "LOG";
        return "?";
      },
      message);
}

Message decode(std::string_view frame) {
  if (!json_depth_ok(frame)) {
    throw ProtocolError("message nested more than " + std::to_string(kMaxJsonDepth) +
                        " levels deep");
  }
  json j = parse_json_bounded(frame);
  if (j.is_discarded()) throw ProtocolError("message is not valid JSON");
  if (!j.is_object()) throw ProtocolError("message is not a JSON object");
  auto v = j.find("v");
  if (v == j.end()) throw ProtocolError("message has no protocol version \"v\"");
  if (!v->is_number_integer() && !v->is_number_unsigned()) {
    throw ProtocolError("message: v: expected the protocol version (an integer)");
  }
  std::int64_t version =
      v->is_number_unsigned()
          ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                v->get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()))
          : v->get<std::int64_t>();
  if (version != kProtocolVersion) {
    throw VersionError("unsupported protocol version " + std::to_string(version) +
                           " (this side speaks version " + std::to_string(kProtocolVersion) + ")",
                       version);
  }
  auto t = j.find("type");
  if (t == j.end() || !t->is_string()) throw ProtocolError("message has no \"type\" string");
  std::string type = t->get<std::string>();
  try {
    return decode_object(Node(j, type.size() > 40 ? type.substr(0, 40) : type, ""), type);
  } catch (const ProtocolError&) {
    throw;
  } catch (const Error& e) {
    throw ProtocolError(e.what());
  } catch (const std::exception& e) {  // a json accessor on an unexpected shape
    throw ProtocolError(type + ": " + e.what());
  }
}

}  // namespace sia::channel
