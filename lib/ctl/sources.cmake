# Sources of lib/ctl (the controller core: configuration, state directory, job book,
# round engine, node drivers, client operations).
sia_module(ctl
  ctl/config.cpp
  ctl/journal.cpp
  ctl/job_book.cpp
  ctl/job_records.cpp
  ctl/record_fields.cpp
  ctl/report_records.cpp
  ctl/book_json.cpp
  ctl/book_fairness.cpp
  ctl/state_store.cpp
  ctl/fsck.cpp
  ctl/pipe_process.cpp
  ctl/node_outputs.cpp
  ctl/stop_first.cpp
  ctl/command_driver.cpp
  ctl/slurm_batch.cpp
  ctl/slurm_driver.cpp
  ctl/slurm_generations.cpp
  ctl/slurm_history.cpp
  ctl/slurm_logs.cpp
  ctl/submission.cpp
  ctl/stages.cpp
  ctl/admission.cpp
  ctl/book_reservations.cpp
  ctl/round_engine.cpp
  ctl/round_outage.cpp
  ctl/client_docs.cpp
  ctl/app_explanation.cpp
  ctl/job_requests.cpp
  ctl/history.cpp
  ctl/client_backend.cpp
  ctl/client_render.cpp
  ctl/job_log.cpp
  ctl/local_logs.cpp
)
target_link_libraries(sia_ctl
  PUBLIC sia_channel sia_cli sia_core sia_deadline sia_exec sia_model sia_policy sia_round
         sia_slurm
  PRIVATE sia_os sia_place)
