// Workloads for the simulator: jobs with submission times.
//  - The published artifact's CSV: name, time (seconds), application (a catalog model),
//    num_replicas and batch_size (the hand-tuned fixed configuration baselines use), and an
//    optional category (adaptive | scale-gpus | rigid).
//  - JSON Lines (or one Jobs document) of JobSpecs with submit_time, and App documents
//    (core/app_spec.hpp): an App with a template adds its trials; one without declares the
//    app scheduler of the jobs that name it in `app`.
// Every row is checked; an error names the file, the line and the column.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/app_spec.hpp"
#include "core/job_spec.hpp"
#include "model/catalog.hpp"

namespace sia {

// Reads a workload (by extension: .csv, else documents); jobs sorted by submission time,
// ties in file order. Models are checked against `catalog`. The App documents go to `apps`
// when given.
std::vector<JobSpec> read_workload(const std::string& file, const Catalog& catalog,
                                   std::vector<AppSpec>* apps = nullptr);
// The same, from text already in memory; `file` names it and its extension decides the
// format.
std::vector<JobSpec> parse_workload(std::string_view text, const std::string& file,
                                    const Catalog& catalog, std::vector<AppSpec>* apps = nullptr);
std::vector<JobSpec> parse_workload_csv(std::string_view text, const std::string& file,
                                        const Catalog& catalog);

}  // namespace sia
