# Unit tests of lib/os (sia_test is defined in tests/CMakeLists.txt). They start /bin/sh.
sia_test(os
  os/test_spawn.cpp
  os/test_run_process.cpp
  os/test_lock_file.cpp
  os/test_clock.cpp)
