#include "os/random_text.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace sia::os {

std::string random_text(std::size_t n) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::vector<unsigned char> bytes(n);
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(bytes.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw Error(ExitStatus::io, std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
  std::string out;
  out.reserve(n);
  for (unsigned char b : bytes) out += kChars[b % (sizeof kChars - 1)];
  return out;
}

}  // namespace sia::os
