// When the control channel must be encrypted, and setting CURVE on its sockets.
// CURVE is mandatory on every endpoint other than ipc://, inproc:// and tcp on a loopback
// address (127.0.0.0/8, ::1, localhost): require_curve() refuses to go on otherwise
// (status 78, saying which setting is missing). A server key without an allow-list is
// refused too: CURVE alone accepts any client that knows the server's public key.
// Thread-safety: pure functions; the socket setters act on the socket given.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <zmq.hpp>

#include "channel/keys.hpp"

namespace sia::channel {

// True for ipc://, inproc:// and tcp:// on 127.0.0.0/8, ::1 or localhost. A tcp connect
// endpoint with a source address ("tcp://SRC;DEST") is judged by DEST.
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

// check_endpoint first; then status 78 when `endpoint` is not local and `have_curve` is false.
// `role` ("bind", "connect") and `settings` ("[controller] secret_key and allow") go into the
// message.
void require_curve(const std::string& endpoint, bool have_curve, std::string_view role,
                   std::string_view settings);

// Makes `socket` a CURVE server with `key`; ZAP requests go to domain "sia".
void set_curve_server(zmq::socket_t& socket, const KeyPair& key);
// Makes `socket` a CURVE client of `keys.server_key`.
void set_curve_client(zmq::socket_t& socket, const ClientKeys& keys);

// Loads client keys from files: the server's public key and our secret key (0600).
std::optional<ClientKeys> load_client_keys(const std::string& server_key_file,
                                           const std::string& secret_key_file);

}  // namespace sia::channel
