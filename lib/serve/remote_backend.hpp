// RemoteBackend: the client subcommands' ClientBackend (lib/ctl/client_backend.hpp) over
// the control channel: each call is one request to `sia-ctl serve` at [client] connect
// (or --connect), with CURVE keys from [client] server_key and secret_key -- else, on
// tcp://, the controller's own STATE/keys/server.pub and admin.key of controller.state_dir
// when they are there (channel::local_admin_keys); keys are mandatory on tcp, loopback
// included (77 without) -- and returns the document of its REPLY. Errors are those of
// channel::call_document: 69 nothing answered, 77 the key was refused, and the
// controller's own status for a refused request (65 a bad job, 66 an unknown one).
// install_remote_backend() makes make_client_backend() choose it when connect is set.
// Thread-safety: one thread per backend object.
#pragma once

#include <memory>

#include "channel/client_rpc.hpp"
#include "ctl/client_backend.hpp"

namespace sia::serve {

class RemoteBackend : public ctl::ClientBackend {
 public:
  explicit RemoteBackend(const ctl::Settings& config);
  using ctl::ClientBackend::submit;
  nlohmann::json submit(const ctl::Submission& submission) override;
  // SUBMIT with "dry_run": the controller checks it all and records nothing.
  void check_submit(const ctl::Submission& submission) override;
  nlohmann::json status(const std::vector<std::string>& jobs) override;
  nlohmann::json request(ctl::JobRequest request, const std::vector<std::string>& jobs) override;
  nlohmann::json nodes() override;
  nlohmann::json explain(const std::string& job) override;
  nlohmann::json history() override;
  // LOGS: the controller asks the agent of the rank's node (answered within 5 s, or 69).
  nlohmann::json logs(const ctl::LogQuery& query) override;

 private:
  nlohmann::json call(channel::RequestKind kind, nlohmann::json args);
  channel::ClientOptions options_;
};

// Sets ctl::remote_backend_factory() to make RemoteBackends.
void install_remote_backend();

}  // namespace sia::serve
