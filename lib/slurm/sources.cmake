# Sources of lib/slurm (Slurm as the cluster's resource manager: its commands run through
# one seam, its node and job records read, sia's mark on its own jobs, the cluster and the
# usable GPUs as Slurm sees them). lib/slurm depends on lib/core and lib/os.
sia_module(slurm
  slurm/command_runner.cpp
  slurm/beside_runner.cpp
  slurm/slurm_fields.cpp
  slurm/slurm_nodes.cpp
  slurm/slurm_jobs.cpp
  slurm/job_mark.cpp
  slurm/slurm_cluster.cpp
  slurm/slurm_accounting.cpp
  slurm/slurm_node_view.cpp
)
target_link_libraries(sia_slurm
  PUBLIC sia_core
  PRIVATE sia_os)
