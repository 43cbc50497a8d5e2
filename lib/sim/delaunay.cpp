#include "sim/delaunay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

#include "core/error.hpp"

namespace sia {

LinearInterpolator3::LinearInterpolator3(std::vector<std::array<double, 3>> points,
                                         std::vector<std::array<double, 2>> values)
    : points_(std::move(points)), values_(std::move(values)) {
  const int n = static_cast<int>(points_.size());
  if (n < 4) return;
  std::vector<coordT> coords;
  coords.reserve(3 * n);
  for (const auto& p : points_) coords.insert(coords.end(), p.begin(), p.end());
  qhT qh_qh;
  qhT* qh = &qh_qh;
  qh_zero(qh, nullptr);
  std::FILE* devnull = std::fopen("/dev/null", "w");
  char flags[] = "qhull d Qbb Qc Qz Q12 Qt";
  int exitcode = qh_new_qhull(qh, 3, n, coords.data(), False, flags, nullptr, devnull);
  if (exitcode == 0) {
    facetT* facet;
    vertexT* vertex;
    vertexT** vertexp;
    FORALLfacets {
      if (facet->upperdelaunay) continue;
      Simplex s;
      int k = 0;
      bool ok = true;
      FOREACHvertex_(facet->vertices) {
        int id = qh_pointid(qh, vertex->point);
        if (id < 0 || id >= n || k >= 4) {
          ok = false;
          break;
        }
        s.v[k++] = id;
      }
      if (!ok || k != 4) continue;
      const auto& p0 = points_[s.v[0]];
      double m[9];
      for (int c = 0; c < 3; ++c) {
        for (int r = 0; r < 3; ++r) m[3 * r + c] = points_[s.v[c + 1]][r] - p0[r];
      }
      double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                   m[2] * (m[3] * m[7] - m[4] * m[6]);
      if (std::fabs(det) < 1e-12) continue;  // flat: no interior to interpolate in
      double id = 1.0 / det;
      s.inv = {(m[4] * m[8] - m[5] * m[7]) * id, (m[2] * m[7] - m[1] * m[8]) * id,
               (m[1] * m[5] - m[2] * m[4]) * id, (m[5] * m[6] - m[3] * m[8]) * id,
               (m[0] * m[8] - m[2] * m[6]) * id, (m[2] * m[3] - m[0] * m[5]) * id,
               (m[3] * m[7] - m[4] * m[6]) * id, (m[1] * m[6] - m[0] * m[7]) * id,
               (m[0] * m[4] - m[1] * m[3]) * id};
      for (int r = 0; r < 3; ++r) {
        s.lo[r] = s.hi[r] = p0[r];
        for (int c = 1; c < 4; ++c) {
          s.lo[r] = std::min(s.lo[r], points_[s.v[c]][r]);
          s.hi[r] = std::max(s.hi[r], points_[s.v[c]][r]);
        }
      }
      simplices_.push_back(s);
    }
  }
  int curlong = 0, totlong = 0;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  if (devnull) std::fclose(devnull);
  if (exitcode != 0) {
    throw Error(ExitStatus::software, "Qhull could not triangulate the profile points (code " +
                                          std::to_string(exitcode) + ")");
  }
}

std::optional<std::array<double, 2>> LinearInterpolator3::interpolate(
    const std::array<double, 3>& q) const {
  constexpr double eps = 1e-9;
  for (const auto& s : simplices_) {
    bool inside_box = true;
    for (int r = 0; r < 3; ++r) {
      double span = std::max(1.0, s.hi[r] - s.lo[r]);
      if (q[r] < s.lo[r] - eps * span || q[r] > s.hi[r] + eps * span) inside_box = false;
    }
    if (!inside_box) continue;
    const auto& p0 = points_[s.v[0]];
    double d[3] = {q[0] - p0[0], q[1] - p0[1], q[2] - p0[2]};
    double b[4];
    for (int c = 0; c < 3; ++c) {
      b[c + 1] = s.inv[3 * c] * d[0] + s.inv[3 * c + 1] * d[1] + s.inv[3 * c + 2] * d[2];
    }
    b[0] = 1 - b[1] - b[2] - b[3];
    if (b[0] < -eps || b[1] < -eps || b[2] < -eps || b[3] < -eps) continue;
    std::array<double, 2> out{0, 0};
    for (int k = 0; k < 4; ++k) {
      out[0] += b[k] * values_[s.v[k]][0];
      out[1] += b[k] * values_[s.v[k]][1];
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace sia
