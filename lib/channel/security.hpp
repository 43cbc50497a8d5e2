// When the control channel must be encrypted, and setting CURVE on its sockets.
// No unauthenticated peer is trusted: CURVE is mandatory on every tcp:// endpoint,
// loopback included (any local user can reach a loopback port). require_curve() refuses
// to go on otherwise, saying which setting is missing. ipc:// may go without CURVE because
// its socket lives in a private directory (make_ipc_private: 0700, owned by the
// controller's user) and the listener drops a peer whose uid (SO_PEERCRED) is neither the
// controller's nor root's (restrict_ipc_peers), so an ipc peer is the controller's own
// user (or root) even if the directory's mode is loosened; inproc:// is for tests (one
// process). A server key without an allow-list is refused too: CURVE alone
// accepts any client that knows the server's public key.
// Thread-safety: pure functions but make_ipc_private (the file system); the socket setters
// (restrict_ipc_peers, set_curve_*) act on the socket given.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <zmq.hpp>

#include "channel/keys.hpp"
#include "core/error.hpp"

namespace sia::channel {

// True for ipc:// and inproc:// (a peer there is the controller's own user or process).
bool is_local_endpoint(std::string_view endpoint);

// Status 64 unless `endpoint` is tcp://HOST:PORT (HOST may be "*" when binding),
// ipc://PATH or inproc://NAME: "--connect: expected an endpoint tcp://HOST:PORT, ipc://PATH
// or inproc://NAME, got \"tcp//x\"". `role` is "connect" or "bind" (the flag's name).
void check_endpoint(const std::string& endpoint, std::string_view role);

// The keys one end of a connection presents: the server's public key and its own pair.
struct ClientKeys {
  std::string server_key;  // z85 public key of the controller
  KeyPair own;
};

// check_endpoint first; then `status` (78 unless told) when `endpoint` is tcp:// and
// `have_curve` is false: "connect tcp://127.0.0.1:7400: CURVE is mandatory on tcp, loopback
// included (SETTINGS)". `role` ("bind", "connect") and `settings` go into the message.
void require_curve(const std::string& endpoint, bool have_curve, std::string_view role,
                   std::string_view settings, ExitStatus status = ExitStatus::config);

// For a bind to ipc://PATH: creates PATH's directory (mode 0700) when it is missing and
// checks that it is private -- owned by this process's user, no access for group or
// others -- else status 77 naming it and its mode. Other endpoints: nothing.
void make_ipc_private(const std::string& endpoint);

// For a bind to ipc://PATH, before the bind: `socket` accepts a connection only from a
// process whose uid (SO_PEERCRED) is this process's effective uid or 0 (root); libzmq
// closes any other at once, before a message passes. Status 78 naming the endpoint when
// libzmq cannot check uids. Other endpoints: nothing.
void restrict_ipc_peers(zmq::socket_t& socket, const std::string& endpoint);

// Makes `socket` a CURVE server with `key`; ZAP requests go to domain "sia".
void set_curve_server(zmq::socket_t& socket, const KeyPair& key);
// Makes `socket` a CURVE client of `keys.server_key`.
void set_curve_client(zmq::socket_t& socket, const ClientKeys& keys);

// Loads client keys from files: the server's public key and our secret key (0600).
std::optional<ClientKeys> load_client_keys(const std::string& server_key_file,
                                           const std::string& secret_key_file);

// For a client with no keys of its own: STATE_DIR/keys/server.pub and admin.key, which
// `sia-ctl serve` made in the same state directory (make_local_keys), when both exist and
// admin.key may be read; nullopt otherwise.
std::optional<ClientKeys> local_admin_keys(const std::string& state_dir);

}  // namespace sia::channel
