// `sia-ctl plot` as a library call: draws what a simulation wrote -- its SimResult
// document, its per-job records and its per-round records (sia-formats(5)) -- as one
// self-contained HTML page of SVG charts comparing the policies: JCT and finish-time
// fairness CDFs, restarts per job, GPUs held per GPU type over time (stacked, one chart
// per policy), queue length and contention over time, and the policy's runtime per round.
// A Series document (an experiment's curves) is drawn as a line chart instead.
// `sia-ctl simulate --report` calls write_simulation_report() with the same records in
// memory. Bad input is one error naming the file, the line and the field (status 65; 66
// for a file that cannot be read); the page is written atomically.
// Thread-safety: process-wide (stdout).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sia::app {

struct PlotArgs {
  std::string input;   // a SimResult or Series document; "" for none
  std::string jobs;    // per-job records (JSON Lines); "" for none
  std::string events;  // per-round records (JSON Lines); "" for none
  std::string out;     // the HTML file; "" or "-" for stdout
};

int run_plot(const PlotArgs& args);

// Records already parsed, with the name errors give for where they came from.
struct ResultInput {
  const nlohmann::json* doc = nullptr;  // the SimResult envelope, or null
  std::string file;
};
struct RecordsInput {
  const std::vector<nlohmann::json>& records;  // JSON Lines records; other types are skipped
  std::string file;
};

// Renders and writes the simulation report (plot's page for these records).
void write_simulation_report(const std::string& out, const ResultInput& result,
                             const RecordsInput& jobs, const RecordsInput& rounds);

}  // namespace sia::app
