# Unit tests of lib/channel (sia_test is defined in tests/CMakeLists.txt). They talk over
# ipc:// in temporary directories and tcp://127.0.0.1; test_sia_run_node runs bin/sia-run.
sia_test(channel
  channel/test_protocol.cpp
  channel/test_keys.cpp
  channel/test_hub.cpp
  channel/test_agent.cpp
  channel/test_lease.cpp
  channel/test_lease_memory.cpp
  channel/test_ipc_trust.cpp
  channel/test_sia_run_node.cpp)
add_dependencies(test_channel sia-run)
# Connecting as another user (the uid filter; fake controllers of another user): one
# ctest, run as root only (status 77, skipped, otherwise).
add_executable(test_channel_root channel/test_ipc_peers.cpp channel/test_fake_controller.cpp
  $<TARGET_OBJECTS:sia_test_main>)
target_link_libraries(test_channel_root PRIVATE sia Catch2::Catch2)
target_include_directories(test_channel_root PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(test_channel_root PRIVATE
  SIA_TEST_SOURCE_DIR="${CMAKE_SOURCE_DIR}" SIA_TEST_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
add_test(NAME channel/ipc_peers COMMAND test_channel_root)
set_tests_properties(channel/ipc_peers PROPERTIES SKIP_RETURN_CODE 77)
