# Sources of lib/sim: the simulator (ground truth, workloads, metrics). Uses core, deadline, os, model, place,
# policy and round.
sia_module(sim
  sim/delaunay.cpp
  sim/ground_truth.cpp
  sim/sim_job.cpp
  sim/workload.cpp
  sim/workload_deadlines.cpp
  sim/workload_transform.cpp
  sim/deadline_transform.cpp
  sim/deadlines.cpp
  sim/searches.cpp
  sim/sim_quirks.cpp
  sim/sim_apps.cpp
  sim/round_files.cpp
  sim/sim_results.cpp
  sim/sim_reservations.cpp
  sim/simulator.cpp
  sim/fairness.cpp
  sim/metrics.cpp
)
target_link_libraries(sia_sim
  PUBLIC sia_core sia_deadline sia_model sia_policy sia_round
  PRIVATE sia_os sia_place Qhull::qhull_r)
