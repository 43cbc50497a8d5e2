// Helpers of the control channel tests: a NodeBackend that counts what it is asked to do
// and finishes at once, a temporary directory, a raw DEALER playing an agent or client, and
// loops that drive a hub and agents from the test's thread until something happens.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "channel/agent.hpp"
#include "channel/hub.hpp"
#include "channel/node_backend.hpp"
#include "channel/protocol.hpp"
#include "channel/security.hpp"
#include "exec/temp_dir.hpp"

namespace sia::channel::test {

using exec::test::TempDir;

// Applies by counting; reports are whatever the test puts in `reports`.
class FakeNode : public NodeBackend {
 public:
  int applies = 0;
  int stops = 0;
  nlohmann::json last_placement;
  std::optional<Outcome> pending;
  std::vector<ReportLine> reports;  // all lines ever written, in file order per job
  bool hold = false;                // keep an operation running until released

  void begin_apply(const nlohmann::json& placement, const nlohmann::json&) override {
    ++applies;
    last_placement = placement;
    pending = Outcome{Op::apply, true, 0, {{"actions", nlohmann::json::array()}}, ""};
  }
  void begin_stop_all(const std::string&) override {
    ++stops;
    pending = Outcome{Op::stop, true, 0, nullptr, ""};
  }
  bool busy() override { return hold && pending.has_value(); }
  std::optional<Outcome> take_outcome() override {
    if (hold) return std::nullopt;
    std::optional<Outcome> o;
    o.swap(pending);
    return o;
  }
  nlohmann::json status = {{"node", "fake"}, {"jobs", nlohmann::json::array()}};
  nlohmann::json log;  // read_log's answer (null: no log, status 66)

  nlohmann::json run_status() override { return status; }
  nlohmann::json read_log(const exec::LogRequest& r) override {
    if (log.is_null()) throw sia::Error(sia::ExitStatus::no_input, "no log of " + r.job + " here");
    return log;
  }
  std::vector<ReportLine> read_reports(const Offsets& from, std::size_t, Offsets& next) override {
    std::vector<ReportLine> out;
    for (const auto& l : reports) {
      auto it = from.find(l.job);
      std::int64_t f = it == from.end() ? 0 : it->second;
      if (l.offset < f) continue;
      out.push_back(l);
      std::int64_t& n = next[l.job];
      n = std::max<std::int64_t>(n, l.offset + static_cast<std::int64_t>(l.line.size()) + 1);
    }
    return out;
  }
  Offsets report_ends() override {
    Offsets o;
    for (const auto& l : reports) {
      o[l.job] = l.offset + static_cast<std::int64_t>(l.line.size()) + 1;
    }
    return o;
  }
  void add_report(const std::string& job, const std::string& line) {
    std::int64_t off = 0;
    for (const auto& l : reports) {
      if (l.job == job) off = l.offset + static_cast<std::int64_t>(l.line.size()) + 1;
    }
    reports.push_back({job, off, line});
  }
};

// A DEALER the test speaks the protocol through by hand.
class RawPeer {
 public:
  RawPeer(const std::string& endpoint, const std::optional<ClientKeys>& keys = std::nullopt)
      : sock_(ctx_, zmq::socket_type::dealer) {
    sock_.set(zmq::sockopt::linger, 0);
    if (keys) set_curve_client(sock_, *keys);
    sock_.connect(endpoint);
  }
  void send(const Message& m) { sock_.send(zmq::buffer(encode(m)), zmq::send_flags::none); }
  void send_raw(const std::string& text) { sock_.send(zmq::buffer(text), zmq::send_flags::none); }
  // The next message within `ms`, or nullopt.
  std::optional<Message> recv(int ms = 2000) {
    zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(ms));
    if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
    zmq::message_t m;
    (void)sock_.recv(m);
    return decode(m.to_string());
  }

 private:
  zmq::context_t ctx_;
  zmq::socket_t sock_;
};

// Polls `hub` (and steps `agents`) until `want` accepts an event or `ms` pass; returns
// every event seen, the accepted one last.
inline std::vector<HubEvent> drive(Hub& hub, const std::vector<Agent*>& agents,
                                   const std::function<bool(const HubEvent&)>& want, int ms = 3000,
                                   bool* found = nullptr) {
  std::vector<HubEvent> seen;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  if (found) *found = false;
  while (std::chrono::steady_clock::now() < end) {
    for (auto* a : agents) a->step(std::chrono::milliseconds(0));
    for (auto& e : hub.poll(std::chrono::milliseconds(5))) {
      bool ok = want(e);
      seen.push_back(std::move(e));
      if (ok) {
        if (found) *found = true;
        return seen;
      }
    }
  }
  return seen;
}

inline bool has_event(const std::vector<HubEvent>& events, HubEventType type,
                      const std::string& node = "") {
  for (const auto& e : events) {
    if (e.type == type && (node.empty() || e.node == node)) return true;
  }
  return false;
}

}  // namespace sia::channel::test
