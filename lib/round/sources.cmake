# Sources of lib/round: what one scheduling round is, shared by the simulator (lib/sim) and
# the controller (lib/ctl). Uses core, os, model, policy and place.
sia_module(round
  round/previous.cpp
  round/schedule_pass.cpp
  round/app_phase.cpp
  round/contention.cpp
  round/census.cpp
  round/round_documents.cpp
  round/round_driver.cpp
  round/guarantee.cpp
  round/reservations.cpp
  round/take_back.cpp
)
target_link_libraries(sia_round
  PUBLIC sia_core sia_model sia_policy
  PRIVATE sia_os sia_place)
