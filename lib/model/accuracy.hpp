// How well the throughput model predicts what it was not fitted to, on the catalog's real
// measurements: fit a model from a GPU type's 1- and 2-GPU placements and predict the step
// time of every other measured placement on that type; and, for bootstrapping (Sia Eq. 1),
// predict a type from its single-GPU rows plus another type's 1- and 2-GPU model.
// Used by a unit test (bounds) and by bench/model_accuracy (the figures).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "model/catalog.hpp"

namespace sia {

struct AccuracyResult {
  std::string model;
  std::string gpu_type;  // the predicted type
  std::string source;    // the type whose multi-GPU shape was used ("" = own fit)
  int fit_points = 0;
  std::vector<double> errors;  // |predicted - measured| / measured, one per predicted row
  double median() const;
  double p90() const;
};

// Nearest-rank percentile (q in [0, 100]) of unsorted values; 0 for none.
double nearest_rank(std::vector<double> values, double q);

// For every GPU type of `m` with multi-GPU rows: fit on 1- and 2-GPU rows, predict the rest.
std::vector<AccuracyResult> fit_accuracy(const ModelInfo& m);
// Predict `target`'s multi-GPU rows from its single-GPU rows and `source`'s 1- and 2-GPU
// rows. With `linear` the source is ignored (the single-GPU fit alone: perfect scaling).
AccuracyResult bootstrap_accuracy(const ModelInfo& m, const std::string& source,
                                  const std::string& target, bool linear = false);

}  // namespace sia
