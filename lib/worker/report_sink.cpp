#include "worker/report_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "os/safe_open.hpp"

namespace sia::worker {

struct ReportSink::Zmq {
  zmq::context_t context{1};
  zmq::socket_t socket{context, zmq::socket_type::push};
};

bool is_zmq_endpoint(const std::string& t) {
  return t.rfind("tcp://", 0) == 0 || t.rfind("ipc://", 0) == 0 || t.rfind("inproc://", 0) == 0;
}

ReportSink::ReportSink(const std::string& target, std::function<void(const std::string&)> warn)
    : target_(target), warn_(std::move(warn)) {
  if (target.empty()) return;
  if (is_zmq_endpoint(target)) {
    try {
      zmq_ = std::make_unique<Zmq>();
      zmq_->socket.set(zmq::sockopt::linger, 2000);
      zmq_->socket.set(zmq::sockopt::sndhwm, 1000);
      zmq_->socket.connect(target);
    } catch (const zmq::error_t& e) {
      throw Error(ExitStatus::config, "SIA_REPORT: " + target + ": " + e.what());
    }
    return;
  }
  fd_ = ::open(target.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, os::kPrivateFile);
  if (fd_ < 0) {
    throw Error(ExitStatus::cant_create,
                "SIA_REPORT: " + target + ": cannot open: " + std::strerror(errno));
  }
}

ReportSink::~ReportSink() {
  if (fd_ >= 0) ::close(fd_);
}

void ReportSink::send(const nlohmann::json& record) {
  if (target_.empty()) return;
  std::string line = dump_json(record, false);
  if (zmq_) {
    try {
      (void)zmq_->socket.send(zmq::buffer(line), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      if (!warned_ && warn_) warn_("reports to " + target_ + " fail: " + e.what());
      warned_ = true;
    }
    return;
  }
  line += '\n';
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size()) && !warned_) {
    warned_ = true;
    if (warn_) {
      warn_("reports to " + target_ +
            " fail: " + (n < 0 ? std::string(std::strerror(errno)) : std::string("short write")));
    }
  }
}

}  // namespace sia::worker
