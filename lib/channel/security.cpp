#include "channel/security.hpp"

#include <arpa/inet.h>

#include "core/error.hpp"

namespace sia::channel {

namespace {

bool loopback_host(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace

bool is_local_endpoint(std::string_view endpoint) {
  if (endpoint.substr(0, 6) == "ipc://" || endpoint.substr(0, 9) == "inproc://") return true;
  if (endpoint.substr(0, 6) != "tcp://") return false;
  std::string_view rest = endpoint.substr(6);
  if (auto semi = rest.rfind(';'); semi != std::string_view::npos) rest = rest.substr(semi + 1);
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return false;
  return loopback_host(std::string(rest.substr(0, colon)));
}

void check_endpoint(const std::string& endpoint, std::string_view role) {
  auto bad = [&] {
    throw Error(ExitStatus::usage, "--" + std::string(role) +
                                       ": expected an endpoint tcp://HOST:PORT, ipc://PATH or "
                                       "inproc://NAME, got \"" +
                                       endpoint + "\"");
  };
  std::string_view e = endpoint;
  if (e.substr(0, 6) == "ipc://" || e.substr(0, 9) == "inproc://") {
    if (e.size() == (e[0] == 'i' && e[1] == 'p' ? 6u : 9u)) bad();
    return;
  }
  if (e.substr(0, 6) != "tcp://") bad();
  std::string_view rest = e.substr(6);
  if (auto semi = rest.rfind(';'); semi != std::string_view::npos) rest = rest.substr(semi + 1);
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) bad();
  std::string_view port = rest.substr(colon + 1);
  if (port == "*" && role == "bind") return;
  if (port.empty() || port.size() > 5) bad();
  int n = 0;
  for (char c : port) {
    if (c < '0' || c > '9') bad();
    n = n * 10 + (c - '0');
  }
  if (n > 65535 || (n == 0 && role != "bind")) bad();
}

void require_curve(const std::string& endpoint, bool have_curve, std::string_view role,
                   std::string_view settings) {
  check_endpoint(endpoint, role);
  if (have_curve || is_local_endpoint(endpoint)) return;
  throw Error(ExitStatus::config,
              std::string(role) + " " + endpoint +
                  ": CURVE encryption is mandatory on an address other than loopback or "
                  "ipc:// (set " +
                  std::string(settings) + ")");
}

void set_curve_server(zmq::socket_t& socket, const KeyPair& key) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, key.secret_key);
  socket.set(zmq::sockopt::zap_domain, "sia");
}

void set_curve_client(zmq::socket_t& socket, const ClientKeys& keys) {
  socket.set(zmq::sockopt::curve_serverkey, keys.server_key);
  socket.set(zmq::sockopt::curve_publickey, keys.own.public_key);
  socket.set(zmq::sockopt::curve_secretkey, keys.own.secret_key);
}

std::optional<ClientKeys> load_client_keys(const std::string& server_key_file,
                                           const std::string& secret_key_file) {
  if (server_key_file.empty() && secret_key_file.empty()) return std::nullopt;
  if (server_key_file.empty() || secret_key_file.empty()) {
    throw Error(ExitStatus::usage,
                "CURVE needs both the server's public key and this side's secret key "
                "(--server-key and --secret-key)");
  }
  ClientKeys k;
  k.own = load_secret_key(secret_key_file);
  k.server_key = load_public_key(server_key_file);
  return k;
}

}  // namespace sia::channel
