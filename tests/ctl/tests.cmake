# Unit tests of lib/ctl (sia_test is defined in tests/CMakeLists.txt).
sia_test(ctl
  ctl/test_config.cpp
  ctl/test_journal.cpp
  ctl/test_fsck.cpp
  ctl/test_job_book.cpp
  ctl/test_round_engine.cpp
  ctl/test_stage_knobs.cpp
  ctl/test_app_scheduler.cpp
  ctl/test_pipe_process.cpp
  ctl/test_command_driver.cpp
  ctl/test_slurm_driver.cpp
  ctl/test_job_log.cpp
  ctl/test_node_outputs.cpp
  ctl/test_report_records.cpp
  ctl/test_client_render.cpp
  ctl/test_submission.cpp
  ctl/test_admission.cpp)
