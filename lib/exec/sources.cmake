# Sources of lib/exec (process supervision).
sia_module(exec
  exec/process_id.cpp
  exec/process_exit.cpp
  exec/run_as.cpp
  exec/local_launcher.cpp
  exec/spawn.cpp
  exec/job_status.cpp
  exec/job_launch.cpp
  exec/state_dir.cpp
  exec/node_plan.cpp
  exec/reconcile.cpp
  exec/supervisor.cpp
  exec/executor.cpp
  exec/node_apply.cpp
  exec/run_documents.cpp
  exec/report_lines.cpp
  exec/rank_log.cpp
)
target_link_libraries(sia_exec
  PUBLIC sia_cli sia_core sia_model sia_os)
