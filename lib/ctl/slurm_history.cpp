#include "ctl/slurm_history.hpp"

#include <map>
#include <vector>

#include "cli/table.hpp"
#include "ctl/slurm_generations.hpp"
#include "slurm/slurm_accounting.hpp"

namespace sia::ctl {

using nlohmann::json;

void add_slurm_history(json& doc, const std::string& state_dir, slurm::CommandRunner& runner) {
  json& rows = doc["data"]["jobs"];
  std::map<std::string, std::vector<SlurmGeneration>> of;
  std::vector<long> ids;
  for (const auto& r : rows) {
    const std::string name = r.value("name", "");
    of[name] = read_slurm_generations(state_dir, name);
    for (const auto& g : of[name]) ids.push_back(g.slurm_job);
  }
  const slurm::Accounting acct = slurm::read_accounting(runner, ids);
  for (auto& r : rows) {
    json list = json::array();
    for (const auto& g : of[r.value("name", "")]) {
      json e = {{"generation", g.generation}, {"slurm_job", g.slurm_job}, {"state", nullptr},
                {"elapsed", nullptr},         {"exit_code", nullptr},     {"exit_signal", nullptr}};
      if (auto it = acct.jobs.find(g.slurm_job); it != acct.jobs.end()) {
        e["state"] = it->second.state;
        e["elapsed"] = it->second.elapsed;
        e["exit_code"] = it->second.exit_code;
        e["exit_signal"] = it->second.exit_signal;
      }
      list.push_back(e);
    }
    r["slurm"] = list;
  }
  doc["data"]["slurm_note"] = acct.note.empty() ? json(nullptr) : json(acct.note);
}

std::string slurm_history_text(const json& gens) {
  std::string out;
  for (const auto& g : gens) {
    std::string s = std::to_string(g.value("slurm_job", 0L));
    if (g.value("state", json()).is_string()) {
      s += " " + g["state"].get<std::string>();
      if (g.value("elapsed", json()).is_number())
        s += " " + cli::duration(g["elapsed"].get<double>());
      if (g.value("exit_code", json()).is_number_integer()) {
        s += " exit " + std::to_string(g["exit_code"].get<int>());
        if (g.value("exit_signal", 0) != 0)
          s += " signal " + std::to_string(g["exit_signal"].get<int>());
      }
    }
    out += (out.empty() ? "" : ", ") + s;
  }
  return out.empty() ? "-" : out;
}

}  // namespace sia::ctl
