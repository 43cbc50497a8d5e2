# Unit tests of lib/os (sia_test is defined in tests/CMakeLists.txt). They start /bin/sh.
sia_test(os
  os/test_spawn.cpp
  os/test_account.cpp
  os/test_run_process.cpp
  os/test_lock_file.cpp
  os/test_clock.cpp
  os/test_safe_open.cpp
  os/test_remove_tree.cpp
  os/test_random_text.cpp)
# Starting programs as another user: one ctest, run as root only (status 77, skipped,
# otherwise).
add_executable(test_os_root os/test_run_as_root.cpp $<TARGET_OBJECTS:sia_test_main>)
target_link_libraries(test_os_root PRIVATE sia Catch2::Catch2)
target_include_directories(test_os_root PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME os/run_as_root COMMAND test_os_root)
set_tests_properties(os/run_as_root PROPERTIES SKIP_RETURN_CODE 77)
