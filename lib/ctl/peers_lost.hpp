// What the controller says of a job on several nodes whose ranks lost their peers while
// every node of it was up (sia-ctl(1), FAILURE MODEL): the first words of its job-peer-lost
// notice, of the round's warning and of its reason once controller.peer_retries is spent.
// Thread-safety: a constant.
#pragma once

namespace sia::ctl {

inline constexpr const char* kPeersLost =
    "its ranks lost their peers on every node while all were up";

}  // namespace sia::ctl
