#include "smoke.hpp"

#include <cstdlib>
#include <cstring>

namespace sia::bench {

bool smoke() {
  const char* v = std::getenv("SIA_BENCH_SMOKE");
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace sia::bench
