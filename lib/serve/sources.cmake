# Sources of lib/serve (the controller daemon `sia-ctl serve`: the round engine's node
# driver on the control channel's hub, the clients' service, the remote client backend),
# added to libsia.
target_sources(sia PRIVATE
  serve/hub_driver.cpp
  serve/report_journal.cpp
  serve/client_service.cpp
  serve/log_requests.cpp
  serve/remote_backend.cpp
  serve/serve_command.cpp
)
