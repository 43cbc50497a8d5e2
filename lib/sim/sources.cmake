# Sources of lib/sim: the simulator (ground truth, workloads, metrics). Uses core, os, model, place and
# policy.
sia_module(sim
  sim/delaunay.cpp
  sim/ground_truth.cpp
  sim/sim_job.cpp
  sim/workload.cpp
  sim/workload_transform.cpp
  sim/searches.cpp
  sim/simulator.cpp
  sim/fairness.cpp
  sim/metrics.cpp
)
target_link_libraries(sia_sim
  PUBLIC sia_core sia_model sia_policy
  PRIVATE sia_os sia_place Qhull::qhull_r)
