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
