// Whom an agent trusts at the far end of an ipc:// endpoint. libzmq gives a connecting
// socket no peer credentials (ZMQ_IPC_FILTER_UID acts on a listener only), so the agent
// trusts the file system instead: before each connect the socket's directory -- and every
// directory above it -- must be one that only trusted users can change, so no one else can
// have bound the socket there, nor bind one there later (libzmq reconnects by itself).
//   - the directory's path is resolved (realpath) and the agent connects to the resolved
//     path, so a symbolic link someone else owns cannot redirect a later reconnect;
//   - each directory on it, from "/", is a real directory (lstat) owned by a trusted uid
//     and writable by no one else, except that a directory above the socket's may be
//     world-writable with the sticky bit (/tmp): others cannot rename or remove what a
//     trusted user made there;
//   - the socket file, when it is there, is a socket owned by a trusted uid.
// Trusted uids: root, the agent's own (effective) uid, and the controller's user when
// given (sia-run agent --controller-user). An abstract endpoint (ipc://@NAME) has no
// directory, so anyone may bind the name: it is refused (status 78). tcp:// is trusted
// through CURVE (the agent pins the controller's public key); inproc:// is one process.
// Thread-safety: pure functions of the file system.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sia::channel {

// Root, the effective uid and `controller` when given, without repeats.
std::vector<uid_t> trusted_uids(std::optional<uid_t> controller);

// Status 78 for an abstract ipc:// endpoint ("ipc://@NAME"), naming it and what to use
// instead. Other endpoints: nothing.
void refuse_abstract_ipc(const std::string& endpoint);

// For ipc://PATH: the endpoint to connect to (the directory's path resolved) when the
// checks above pass; nullopt, with `waiting` saying why, when the directory does not exist
// yet (the controller has not made it: connect later). Status 77 naming the directory (or
// socket), its owner and mode when someone untrusted could have put the socket there; 78
// for an abstract endpoint. Any other endpoint is returned as it is.
std::optional<std::string> trusted_ipc_endpoint(const std::string& endpoint,
                                                const std::vector<uid_t>& trusted,
                                                std::string& waiting);

}  // namespace sia::channel
