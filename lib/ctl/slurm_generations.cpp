#include "ctl/slurm_generations.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "os/atomic_file.hpp"

namespace sia::ctl {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string generations_path(const std::string& state_dir, const std::string& job) {
  return state_dir + "/slurm/generations/" + job + ".json";
}

}  // namespace

std::vector<SlurmGeneration> read_slurm_generations(const std::string& state_dir,
                                                    const std::string& job) {
  const std::string path = generations_path(state_dir, job);
  std::vector<SlurmGeneration> out;
  std::ifstream in(path);
  if (!in) return out;
  std::stringstream ss;
  ss << in.rdbuf();
  json doc;
  try {
    doc = parse_json_bounded(ss.str());
  } catch (const std::exception& e) {
    throw Error(ExitStatus::data, path + ": " + e.what());
  }
  const auto bad = [&](const std::string& field, const std::string& expected) {
    return Error(ExitStatus::data, path + ": " + field + ": expected " + expected);
  };
  if (!doc.is_object() || !doc.contains("generations") || !doc["generations"].is_array()) {
    throw bad("generations", "an array");
  }
  for (std::size_t i = 0; i < doc["generations"].size(); ++i) {
    const json& g = doc["generations"][i];
    const std::string at = "generations[" + std::to_string(i) + "]";
    if (!g.is_object()) throw bad(at, "an object");
    SlurmGeneration s;
    const std::pair<const char*, long*> numbers[] = {{"generation", &s.generation},
                                                     {"slurm_job", &s.slurm_job}};
    for (const auto& [key, into] : numbers) {
      if (!g.contains(key) || !g[key].is_number_integer() || g[key].get<long>() < 0) {
        throw bad(at + "." + key, "a non-negative integer");
      }
      *into = g[key].get<long>();
    }
    if (!g.contains("node") || !g["node"].is_string()) throw bad(at + ".node", "a node name");
    s.node = g["node"].get<std::string>();
    out.push_back(std::move(s));
  }
  return out;
}

void record_slurm_generation(const std::string& state_dir, const std::string& job,
                             const SlurmGeneration& g) {
  auto all = read_slurm_generations(state_dir, job);
  std::erase_if(all, [&](const SlurmGeneration& s) { return s.generation == g.generation; });
  all.push_back(g);
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.generation < b.generation; });
  json list = json::array();
  for (const auto& s : all) {
    list.push_back({{"generation", s.generation}, {"slurm_job", s.slurm_job}, {"node", s.node}});
  }
  fs::create_directories(state_dir + "/slurm/generations");
  os::write_file_atomic(generations_path(state_dir, job),
                        json{{"job", job}, {"generations", list}}.dump() + "\n");
}

void forget_slurm_generations(const std::string& state_dir, const std::string& job) {
  std::error_code ec;
  fs::remove(generations_path(state_dir, job), ec);
}

}  // namespace sia::ctl
