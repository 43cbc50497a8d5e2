# Unit tests of lib/exec (sia_test is defined in tests/CMakeLists.txt).
sia_test(exec
  exec/test_job_status.cpp
  exec/test_reconcile.cpp
  exec/test_node_plan.cpp
  exec/test_supervisor.cpp
  exec/test_state_dir.cpp
  exec/test_local_launcher.cpp
  exec/test_run_as.cpp
  exec/test_rank_log.cpp)
# The privilege-escalation suite (sia-run(1), SECURITY): jobs run as nobody, root does the
# work. One ctest, run as root only (status 77, skipped, otherwise).
add_executable(test_exec_root exec/test_root_paths.cpp $<TARGET_OBJECTS:sia_test_main>)
target_link_libraries(test_exec_root PRIVATE sia Catch2::Catch2)
target_include_directories(test_exec_root PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
  ${CMAKE_CURRENT_SOURCE_DIR}/exec)
add_test(NAME exec/root_paths COMMAND test_exec_root)
set_tests_properties(exec/root_paths PROPERTIES SKIP_RETURN_CODE 77)
