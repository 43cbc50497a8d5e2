// ReportSink: where rank 0 sends its JSON Lines reports (SIA_REPORT): a file, appended one
// whole line per write(2), or a ZeroMQ endpoint (tcp://, ipc://, inproc://) it PUSHes to
// without ever blocking training (a message the receiver cannot take yet is dropped after
// the high-water mark; pending ones get 2 s at exit). Opening a file that cannot be created
// fails with status 73; a later write failure is reported once on stderr and training goes on.
// Thread-safety: one thread per sink.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sia::worker {

class ReportSink {
 public:
  // `target` "" sends nowhere. `warn` receives the one-time write-failure message.
  ReportSink(const std::string& target, std::function<void(const std::string&)> warn);
  ~ReportSink();
  ReportSink(const ReportSink&) = delete;
  ReportSink& operator=(const ReportSink&) = delete;

  void send(const nlohmann::json& record);

 private:
  struct Zmq;
  std::string target_;
  std::function<void(const std::string&)> warn_;
  int fd_ = -1;
  std::unique_ptr<Zmq> zmq_;
  bool warned_ = false;
};

bool is_zmq_endpoint(const std::string& target);

}  // namespace sia::worker
