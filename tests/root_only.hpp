// For the tests that only root can run (switching users): skip the whole program, status 77
// (their ctest has SKIP_RETURN_CODE 77), when it runs as anyone else.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace sia::test {

// `what` needs root: "switching users".
inline void require_root(const char* what) {
  if (::geteuid() == 0) return;
  std::printf("skipped: %s needs root (run the test as root)\n", what);
  std::exit(77);
}

}  // namespace sia::test
