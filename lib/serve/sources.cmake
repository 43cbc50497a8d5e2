# Sources of lib/serve (the controller daemon `sia-ctl serve`: the round engine's node
# driver on the control channel's hub, the clients' service, the remote client backend).
sia_module(serve
  serve/hub_driver.cpp
  serve/report_journal.cpp
  serve/client_service.cpp
  serve/log_requests.cpp
  serve/remote_backend.cpp
)
target_link_libraries(sia_serve
  PUBLIC sia_channel sia_core sia_ctl sia_model sia_os
  PRIVATE sia_cli sia_exec)
