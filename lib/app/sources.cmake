# Sources of lib/app: every program's command code, one directory and one library per
# program (lib/app/<program>/ is sia_app_<program>): what tools/<program>/main.cpp calls
# once it has parsed the flags. The top of the layering: each may use any other module.
sia_module(app_estimate app/sia-estimate/estimate.cpp)
target_link_libraries(sia_app_estimate PUBLIC sia_cli PRIVATE sia_core sia_os sia_model)

sia_module(app_profile app/sia-profile/profile.cpp)
target_link_libraries(sia_app_profile PUBLIC sia_cli PRIVATE sia_core sia_os sia_model sia_worker)

sia_module(app_solve app/sia-solve/solve.cpp)
target_link_libraries(sia_app_solve PUBLIC sia_cli sia_policy PRIVATE sia_core sia_os)

sia_module(app_place app/sia-place/place.cpp)
target_link_libraries(sia_app_place PUBLIC sia_cli PRIVATE sia_core sia_os sia_place)

sia_module(app_ctl
  app/sia-ctl/simulate.cpp
  app/sia-ctl/commands.cpp
  app/sia-ctl/fsck_command.cpp
  app/sia-ctl/logs_command.cpp
  app/sia-ctl/serve_command.cpp
  app/sia-ctl/keygen_command.cpp
  app/sia-ctl/plot.cpp
  app/sia-ctl/plot_command.cpp
  app/sia-ctl/slurm_cluster_command.cpp
)
target_link_libraries(sia_app_ctl
  PUBLIC sia_cli sia_policy sia_sim sia_ctl sia_serve
  PRIVATE sia_core sia_os sia_model sia_place sia_exec sia_channel sia_plot sia_slurm)

sia_module(app_run
  app/sia-run/apply.cpp
  app/sia-run/foreground.cpp
  app/sia-run/supervise.cpp
  app/sia-run/reports_command.cpp
  app/sia-run/logs.cpp
  app/sia-run/agent_command.cpp
  app/sia-run/agent_config.cpp
)
target_link_libraries(sia_app_run
  PUBLIC sia_cli sia_exec sia_channel sia_ctl
  PRIVATE sia_core sia_os)
