// random_text: text drawn from the kernel's random source (getrandom), for names that must
// not be guessed -- a temporary's name (safe_open.hpp), the secret in the mark of a Slurm
// job sia submits (slurm/job_mark.hpp).
// Thread-safety: thread-safe (getrandom is).
#pragma once

#include <cstddef>
#include <string>

namespace sia::os {

// `n` characters of [a-z0-9], each from a random byte (about 5.2 bits each). Error(io) when
// the kernel gives no random bytes.
std::string random_text(std::size_t n);

}  // namespace sia::os
