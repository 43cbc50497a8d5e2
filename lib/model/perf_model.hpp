// The throughput model of Pollux (Qiao et al., OSDI '21), as Sia uses it: seven parameters
// describe one job on one GPU type.
//   compute per micro-batch   T_c(b)    = alpha_c + beta_c * b
//   gradient synchronisation  T_n(N, R) = alpha_n + beta_n * max(R - 2, 1e-8)   if N > 1
//                                       = alpha_r + beta_r * max(R - 2, 1e-8)   if N = 1, R > 1
//                                       = 1e-8 (+ 1e-8 * ...)                   if R = 1
//   overlapped step           T_opt     = (T_c^gamma + T_n^gamma)^(1/gamma), gamma in [1, 10]
//   iteration with s extra accumulation steps: T_iter = s * T_c + T_opt
//   throughput (samples/s)    R * b * (s + 1) / T_iter
// Thread-safety: pure functions on values.
#pragma once

#include <array>

namespace sia {

struct PerfParams {
  double alpha_c = 0.1;
  double beta_c = 0.01;
  double alpha_n = 0.1;
  double beta_n = 0.01;
  double alpha_r = 0.1;
  double beta_r = 0.01;
  double gamma = 1.001;

  std::array<double, 7> to_array() const;
  static PerfParams from_array(const std::array<double, 7>& a);
  bool operator==(const PerfParams&) const = default;
};

double compute_time(const PerfParams& p, double local_bsz);
double network_time(const PerfParams& p, int nodes, int replicas);
double optim_time(const PerfParams& p, int nodes, int replicas, double local_bsz);
double iteration_time(const PerfParams& p, int nodes, int replicas, double local_bsz,
                      int accum_steps);
double throughput(const PerfParams& p, int nodes, int replicas, double local_bsz, int accum_steps);

}  // namespace sia
