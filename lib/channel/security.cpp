#include "channel/security.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.hpp"

namespace sia::channel {

bool is_local_endpoint(std::string_view endpoint) {
  return endpoint.substr(0, 6) == "ipc://" || endpoint.substr(0, 9) == "inproc://";
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
                   std::string_view settings, ExitStatus status) {
  check_endpoint(endpoint, role);
  if (have_curve || is_local_endpoint(endpoint)) return;
  throw Error(status, std::string(role) + " " + endpoint +
                          ": CURVE is mandatory on tcp, loopback included (" +
                          std::string(settings) + ")");
}

void make_ipc_private(const std::string& endpoint) {
  if (endpoint.substr(0, 6) != "ipc://") return;
  std::string dir = std::filesystem::path(endpoint.substr(6)).parent_path().string();
  if (dir.empty()) dir = ".";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(ExitStatus::cant_create,
                "bind " + endpoint + ": cannot create " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw Error(ExitStatus::no_perm,
                "bind " + endpoint + ": cannot read " + dir + ": " + std::strerror(errno));
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(ExitStatus::no_perm,
                "bind " + endpoint + ": the socket's directory " + dir + " (mode " + mode +
                    ", owner uid " + std::to_string(st.st_uid) +
                    ") is not private: an ipc:// peer is trusted as this user, so the "
                    "directory must be owned by it with mode 0700 (chmod 700 " +
                    dir + ")");
  }
}

void restrict_ipc_peers(zmq::socket_t& socket, const std::string& endpoint) {
  if (endpoint.substr(0, 6) != "ipc://") return;
  const int own = static_cast<int>(::geteuid());
  std::vector<int> uids = {own};
  if (own != 0) uids.push_back(0);
  for (int uid : uids) {
    if (zmq_setsockopt(socket.handle(), ZMQ_IPC_FILTER_UID, &uid, sizeof uid) != 0) {
      throw Error(ExitStatus::config,
                  "bind " + endpoint + ": cannot limit ipc peers to uid " + std::to_string(uid) +
                      " (ZMQ_IPC_FILTER_UID: " + zmq_strerror(zmq_errno()) +
                      "); this libzmq cannot check a peer's uid (SO_PEERCRED), so bind to "
                      "tcp:// with CURVE instead");
    }
  }
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

std::optional<ClientKeys> local_admin_keys(const std::string& state_dir) {
  if (state_dir.empty()) return std::nullopt;
  const std::string pub = local_key_file(state_dir, "server", "pub");
  const std::string key = local_key_file(state_dir, "admin", "key");
  if (::access(pub.c_str(), R_OK) != 0 || ::access(key.c_str(), R_OK) != 0) return std::nullopt;
  return load_client_keys(pub, key);
}

}  // namespace sia::channel
