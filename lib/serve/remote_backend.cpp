#include "serve/remote_backend.hpp"

#include "channel/security.hpp"
#include "serve/client_service.hpp"

namespace sia::serve {

using nlohmann::json;

RemoteBackend::RemoteBackend(const ctl::Settings& config) {
  options_.endpoint = config.client.connect;
  options_.max_request_bytes = static_cast<std::size_t>(config.controller.max_request_bytes);
  options_.keys = channel::load_client_keys(config.client.server_key, config.client.secret_key);
  if (!options_.keys && !channel::is_local_endpoint(options_.endpoint)) {
    options_.keys = channel::local_admin_keys(config.controller.state_dir);
  }
}

json RemoteBackend::call(channel::RequestKind kind, json args) {
  channel::Request r;
  r.kind = kind;
  r.args = std::move(args);
  return channel::call_document(options_, std::move(r));
}

json RemoteBackend::submit(const ctl::Submission& submission) {
  return call(channel::RequestKind::submit, ctl::submission_body(submission));
}

void RemoteBackend::check_submit(const ctl::Submission& submission) {
  json body = ctl::submission_body(submission);
  body["dry_run"] = true;
  call(channel::RequestKind::submit, std::move(body));
}

json RemoteBackend::status(const std::vector<std::string>& jobs) {
  return call(channel::RequestKind::status, {{"jobs", jobs}});
}

json RemoteBackend::request(ctl::JobRequest request, const std::vector<std::string>& jobs) {
  return call(request_kind_of(request), {{"jobs", jobs}});
}

json RemoteBackend::nodes() {
  return call(channel::RequestKind::nodes, json::object());
}

json RemoteBackend::explain(const std::string& job) {
  return call(channel::RequestKind::explain, {{"job", job}});
}

json RemoteBackend::history() {
  return call(channel::RequestKind::history, json::object());
}

json RemoteBackend::logs(const ctl::LogQuery& q) {
  return call(channel::RequestKind::logs,
              {{"job", q.job}, {"rank", q.rank}, {"tail", q.tail}, {"offset", q.offset}});
}

void install_remote_backend() {
  ctl::remote_backend_factory() = [](const ctl::Settings& config) {
    return std::make_unique<RemoteBackend>(config);
  };
}

}  // namespace sia::serve
