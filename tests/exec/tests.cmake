# Unit tests of lib/exec (sia_test is defined in tests/CMakeLists.txt).
