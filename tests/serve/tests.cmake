# Unit tests of lib/serve (sia_test is defined in tests/CMakeLists.txt).
sia_test(serve
  serve/test_serve.cpp
  serve/test_log_requests.cpp)
