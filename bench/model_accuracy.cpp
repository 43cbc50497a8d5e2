// Prints how well the throughput model predicts measured step times it was not fitted to
// (see lib/model/accuracy.hpp): per model and GPU type, and pooled per model; then the
// same for bootstrapped projections across GPU types (Sia Eq. 1) against the single-GPU
// fit alone (perfect scaling).
//   bench/model_accuracy [CATALOG_DIR]
#include <cstdio>
#include <string>

#include "model/accuracy.hpp"
#include "model/catalog.hpp"

using namespace sia;

static void line(const char* model, const char* type, const char* how, int fit, std::size_t n,
                 double med, double p90) {
  std::printf("%-12s %-22s %-22s %5d %6zu %8.1f%% %8.1f%%\n", model, type, how, fit, n, 100 * med,
              100 * p90);
}

int main(int argc, char** argv) {
  Catalog catalog(argc > 1 ? argv[1] : default_catalog_dir());
  std::printf("Fit on 1- and 2-GPU placements, predict the other placements of the same type\n");
  std::printf("%-12s %-22s %-22s %5s %6s %9s %9s\n", "model", "gpu type", "", "fit", "rows",
              "median", "p90");
  for (const auto& name : catalog.names()) {
    const ModelInfo& m = catalog.get(name);
    auto results = fit_accuracy(m);
    std::vector<double> pooled;
    for (const auto& r : results) {
      line(name.c_str(), r.gpu_type.c_str(), "", r.fit_points, r.errors.size(), r.median(),
           r.p90());
      pooled.insert(pooled.end(), r.errors.begin(), r.errors.end());
    }
    if (!results.empty()) {
      line(name.c_str(), "(all types)", "", 0, pooled.size(), nearest_rank(pooled, 50),
           nearest_rank(pooled, 90));
    }
  }
  std::printf("\nBootstrapped: single-GPU rows of a type + another type's 1-/2-GPU model\n");
  std::printf("%-12s %-22s %-22s %5s %6s %9s %9s\n", "model", "predicted type", "from", "fit",
              "rows", "median", "p90");
  const char* types[] = {"t4", "a100", "rtx2080ti", "v100", "rtx6000"};
  for (const auto& name : catalog.names()) {
    const ModelInfo& m = catalog.get(name);
    if (m.gpus.empty() || m.gpus.front().pipeline_stages > 1) continue;
    std::vector<double> boot, lin;
    for (const char* t : types) {
      for (const char* s : types) {
        if (std::string(s) == t) continue;
        auto r = bootstrap_accuracy(m, s, t);
        boot.insert(boot.end(), r.errors.begin(), r.errors.end());
      }
      auto l = bootstrap_accuracy(m, "", t, true);
      lin.insert(lin.end(), l.errors.begin(), l.errors.end());
    }
    line(name.c_str(), "(5 types)", "Eq. 1 (each other type)", 0, boot.size(),
         nearest_rank(boot, 50), nearest_rank(boot, 90));
    line(name.c_str(), "(5 types)", "1-GPU fit only", 0, lin.size(), nearest_rank(lin, 50),
         nearest_rank(lin, 90));
  }
  return 0;
}
