# Sources of lib/app: the offline programs' commands (estimate, profile, solve, simulate, plot).
# Uses core, os, cli, model, place, policy, sim, worker (live profiling) and plot.
sia_module(app
  app/estimate.cpp
  app/profile.cpp
  app/solve.cpp
  app/simulate.cpp
  app/plot.cpp
)
target_link_libraries(sia_app
  PUBLIC sia_cli sia_policy sia_sim
  PRIVATE sia_core sia_os sia_model sia_place sia_worker sia_plot)
