# Unit tests of lib/worker (sia_test is defined in tests/CMakeLists.txt).
