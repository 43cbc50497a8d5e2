#include "channel/zap_handler.hpp"

#include <arpa/inet.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace sia::channel {

namespace {

constexpr std::size_t kMaxQueuedRefusals = 1000;

std::string z85_of(const zmq::message_t& m) {
  if (m.size() != 32) return "(" + std::to_string(m.size()) + "-byte key)";
  char out[41] = {};
  if (!zmq_z85_encode(out, static_cast<const std::uint8_t*>(m.data()), 32)) return "(bad key)";
  return out;
}

// One ZMTP metadata property: name length (1 byte), name, value length (4 bytes), value.
std::string metadata_property(const std::string& name, const std::string& value) {
  std::string out;
  out.push_back(static_cast<char>(name.size()));
  out += name;
  std::uint32_t len = htonl(static_cast<std::uint32_t>(value.size()));
  out.append(reinterpret_cast<const char*>(&len), 4);
  out += value;
  return out;
}

}  // namespace

struct ZapHandler::Impl {
  zmq::socket_t rep;
  zmq::socket_t stop_rx;
  zmq::socket_t stop_tx;
  std::thread thread;
  std::mutex mu;
  AllowList allow;                   // guarded by mu
  std::deque<std::string> refusals;  // guarded by mu

  void refuse_log(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    if (refusals.size() >= kMaxQueuedRefusals) refusals.pop_front();
    refusals.push_back(line);
  }

  void reply(const std::string& request_id, bool ok, const std::string& text,
             const std::string& user_id, const std::string& metadata) {
    rep.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(std::string(ok ? "200" : "400")), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(text), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(user_id), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(metadata), zmq::send_flags::none);
  }

  void handle() {
    std::vector<zmq::message_t> frames;
    for (;;) {
      zmq::message_t m;
      if (!rep.recv(m)) return;
      bool more = m.more();
      frames.push_back(std::move(m));
      if (!more || frames.size() > 16) break;
    }
    while (frames.back().more()) {  // drain an oversized request
      zmq::message_t m;
      if (!rep.recv(m)) return;
      frames.back() = std::move(m);
    }
    std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
    if (frames.size() < 6 || frames[0].to_string() != "1.0") {
      refuse_log("refused a malformed ZAP request");
      reply(request_id, false, "malformed ZAP request", "", "");
      return;
    }
    std::string address = frames[3].to_string();
    std::string mechanism = frames[5].to_string();
    if (mechanism != "CURVE" || frames.size() < 7) {
      refuse_log("refused a " + mechanism + " connection from " + address +
                 ": only CURVE keys on the allow-list may connect");
      reply(request_id, false, "CURVE required", "", "");
      return;
    }
    std::string key = z85_of(frames[6]);
    std::optional<Identity> who;
    std::string list_file;
    {
      std::lock_guard<std::mutex> lock(mu);
      who = allow.find(key);
      list_file = allow.file();
    }
    if (!who) {
      refuse_log("refused CURVE key " + key + " from " + address + ": not in the allow-list" +
                 (list_file.empty() ? "" : " " + list_file));
      reply(request_id, false, "key not allowed", "", "");
      return;
    }
    reply(request_id, true, "OK", who->user_id(),
          metadata_property(kKeyProperty, key) +
              (who->admin ? metadata_property(kAdminProperty, "1") : std::string()) +
              (who->account.empty() ? std::string()
                                    : metadata_property(kAccountProperty, who->account)));
  }

  void loop() {
    try {
      for (;;) {
        zmq::pollitem_t items[] = {{rep.handle(), 0, ZMQ_POLLIN, 0},
                                   {stop_rx.handle(), 0, ZMQ_POLLIN, 0}};
        zmq::poll(items, 2, std::chrono::milliseconds(-1));
        if (items[1].revents & ZMQ_POLLIN) break;
        if (items[0].revents & ZMQ_POLLIN) handle();
      }
    } catch (const zmq::error_t& e) {
      if (e.num() != ETERM) refuse_log(std::string("ZAP handler stopped: ") + e.what());
    }
    rep.close();
    stop_rx.close();
  }
};

ZapHandler::ZapHandler(zmq::context_t& context, AllowList allow) : impl_(std::make_unique<Impl>()) {
  impl_->allow = std::move(allow);
  std::string stop_endpoint =
      "inproc://sia-zap-stop-" + std::to_string(reinterpret_cast<std::uintptr_t>(impl_.get()));
  try {
    impl_->rep = zmq::socket_t(context, zmq::socket_type::rep);
    impl_->rep.set(zmq::sockopt::linger, 0);
    impl_->rep.bind("inproc://zeromq.zap.01");
    impl_->stop_rx = zmq::socket_t(context, zmq::socket_type::pair);
    impl_->stop_rx.bind(stop_endpoint);
    impl_->stop_tx = zmq::socket_t(context, zmq::socket_type::pair);
    impl_->stop_tx.set(zmq::sockopt::linger, 0);
    impl_->stop_tx.connect(stop_endpoint);
  } catch (const zmq::error_t& e) {
    throw Error(ExitStatus::software, std::string("cannot start the ZAP handler: ") + e.what());
  }
  impl_->thread = std::thread([this] { impl_->loop(); });
}

ZapHandler::~ZapHandler() {
  try {
    impl_->stop_tx.send(zmq::str_buffer("stop"), zmq::send_flags::none);
  } catch (const zmq::error_t&) {
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->stop_tx.close();
}

void ZapHandler::set_allow_list(AllowList allow) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->allow = std::move(allow);
}

std::vector<std::string> ZapHandler::take_refusals() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::string> out(impl_->refusals.begin(), impl_->refusals.end());
  impl_->refusals.clear();
  return out;
}

}  // namespace sia::channel
