// The clients' end of the control channel: one request to the controller over a fresh
// DEALER (with CURVE keys when given; mandatory on tcp://, loopback included), one REPLY back.
// Outcomes map to the exit statuses of conventions.md, thrown as sia::Error:
//   69  nothing answered within the timeout (is `sia-ctl serve` running?)
//   77  the controller refused this client's key (the CURVE handshake was denied by its
//       ZAP handler: HANDSHAKE_FAILED_AUTH), or the handshake failed (a wrong server key),
//       or the controller refused the request (an agent's key). libzmq reports no
//       handshake failure on the client for a wrong server key: the server cannot open
//       the HELLO and drops the connection silently. So with keys, two connections in a
//       row that drop before their handshake succeeded count as a failed handshake (a
//       peer that is not a ZMTP server at all looks the same).
//   65  an answer that cannot be read, or an ERROR (another protocol version, a request
//       over the controller's size limit, ...), or a request over max_request_bytes
//   77  also: a tcp:// endpoint (loopback included) without keys, refused before connecting
// A REPLY with ok false is returned as it is: its status and error are the operation's.
// Thread-safety: each call has its own ZeroMQ context; calls may run in parallel.
#pragma once

#include <optional>
#include <string>

#include "channel/protocol.hpp"
#include "channel/security.hpp"
#include "channel/timing.hpp"

namespace sia::channel {

struct ClientOptions {
  std::string endpoint;
  std::optional<ClientKeys> keys;
  std::string client;                              // the name claimed without CURVE; "" = $USER
  double timeout = kChannelTiming.client_timeout;  // seconds
  // > 0: a request larger than this (encoded) is refused here, status 65, before it is
  // sent -- the controller would refuse it unread (its controller.max_request_bytes).
  std::size_t max_request_bytes = 0;
};

// Sends `request` (an id is made up when it has none) and waits for its REPLY.
Reply call(const ClientOptions& options, Request request);

// call(), then a failed REPLY thrown as Error(status, error).
nlohmann::json call_document(const ClientOptions& options, Request request);

}  // namespace sia::channel
