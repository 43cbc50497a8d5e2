# Unit tests of lib/plot (sia_test is defined in tests/CMakeLists.txt).
sia_test(plot
  plot/test_scale.cpp
  plot/test_chart.cpp)
