// `sia-ctl serve` as a library call: the controller daemon. It
//   - loads the configuration (sia-config(5)) and the cluster, takes STATE/lock for its
//     whole life (a second serve, or a `sia-ctl round`, exits 75), and loads the JobBook
//     (snapshot + journal; a corrupted state file stops it, 65/74, nothing is replaced);
//   - binds the control channel's Hub on controller.bind and tells it how far the journal
//     holds each node's reports, so none is taken twice. tcp:// (loopback included) is
//     always CURVE: with controller.secret_key and the allow-list controller.allow, else
//     with the pair it makes once in STATE/keys (channel::make_local_keys) and the
//     allow-list controller.allow (none: only the admin key), to which the local admin
//     key is always added as client "admin". ipc:// goes without CURVE unless keys are
//     set: its socket's directory must be private (0700, created so when missing). Only
//     the cluster's nodes are accepted at READY;
//   - runs a round (lib/ctl/round_engine.hpp) every controller.round seconds through the
//     HubDriver, at once when a job is submitted into a cluster where nothing runs, and
//     after a restart as soon as the nodes of the last placement are back (else after a
//     round's time); with no node up (held nodes count) rounds stop once nothing is placed;
//   - journals every report line as it arrives (before the hub confirms it to the agent)
//     and answers clients (ClientService; a submission is journaled before its REPLY);
//   - on SIGTERM or SIGINT finishes the round it is in, compacts the state, says BYE to
//     the agents and returns 0.
// Errors: 64 usage, 66 a missing key or cluster, 69 the address in use, 75 the lock
// held, 77 a secret key file not 0600 or an ipc:// directory that is not private, 78
// bad configuration (an allow-list without a secret key, ...), 65/74 bad or unreadable state.
// Thread-safety: process-wide (signal handlers); one per process.
#pragma once

#include "app/sia-ctl/commands.hpp"

namespace sia::serve {

int run_serve_command(const ctl::CtlArgs& args);

}  // namespace sia::serve
