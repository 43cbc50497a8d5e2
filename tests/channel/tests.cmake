# Unit tests of lib/channel (sia_test is defined in tests/CMakeLists.txt). They talk over
# ipc:// in temporary directories and tcp://127.0.0.1; test_sia_run_node runs bin/sia-run.
sia_test(channel
  channel/test_protocol.cpp
  channel/test_keys.cpp
  channel/test_hub.cpp
  channel/test_agent.cpp
  channel/test_sia_run_node.cpp)
add_dependencies(test_channel sia-run)
