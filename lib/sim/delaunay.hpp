// Piecewise-linear interpolation over scattered 3-D points: the Delaunay tetrahedralisation
// of the points (Qhull, with the options scipy's LinearNDInterpolator uses: "d Qbb Qc Qz
// Q12 Qt") and barycentric interpolation inside the tetrahedron that contains the query.
// The simulator uses it for step and sync times of placements that were not profiled,
// over (nodes, replicas, local batch). A query outside the convex hull has no answer
// (std::nullopt): callers must not extrapolate silently.
// Qhull (libqhull_r, Debian libqhull-dev) computes the triangulation: writing a robust 3-D
// Delaunay by hand is exactly the kind of thing a mature library does better.
// Thread-safety: immutable after construction; interpolate() is const and re-entrant.
#pragma once

#include <array>
#include <optional>
#include <vector>

namespace sia {

class LinearInterpolator3 {
 public:
  // `points` and `values` have the same length; duplicate points are allowed (Qhull keeps
  // one of them as a vertex, as scipy does). Throws Error(software) if Qhull fails.
  LinearInterpolator3(std::vector<std::array<double, 3>> points,
                      std::vector<std::array<double, 2>> values);

  std::optional<std::array<double, 2>> interpolate(const std::array<double, 3>& q) const;
  std::size_t simplices() const { return simplices_.size(); }

 private:
  struct Simplex {
    std::array<int, 4> v;
    // Inverse of the 3x3 matrix [p1-p0, p2-p0, p3-p0], for barycentric coordinates.
    std::array<double, 9> inv;
    std::array<double, 3> lo, hi;  // bounding box
  };
  std::vector<std::array<double, 3>> points_;
  std::vector<std::array<double, 2>> values_;
  std::vector<Simplex> simplices_;
};

}  // namespace sia
