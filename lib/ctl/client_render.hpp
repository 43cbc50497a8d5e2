// Tables for people of the documents sia-ctl prints: JobStatusList, NodeList, SlurmNodeList,
// JobExplanation, RoundResult and Config. Unknown kinds are printed as indented JSON.
// Thread-safety: pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sia::ctl {

// `doc` is a whole envelope; `now` (seconds since the epoch) turns times into ages.
std::string render_table(const nlohmann::json& doc, double now);

// A row's "rho" as a table shows it: two decimals, "-" without one (status, apps, history).
std::string rho_text(const nlohmann::json& row);

}  // namespace sia::ctl
