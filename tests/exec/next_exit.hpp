// Waiting for a LocalLauncher's next rank to end, for tests with real processes.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>

#include "exec/local_launcher.hpp"

namespace sia::exec::test {

// Waits (up to 10 s) for the next rank to end.
inline WaitEvent next_exit(LocalLauncher& l) {
  for (int i = 0; i < 100; ++i) {
    WaitEvent ev = l.wait(std::chrono::milliseconds(100));
    if (ev.kind == WaitEvent::Kind::exited) return ev;
  }
  FAIL("no rank ended within 10 s");
  return {};
}

}  // namespace sia::exec::test
