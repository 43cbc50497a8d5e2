#include "model/catalog.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

#ifndef SIA_SOURCE_DATA_DIR
#define SIA_SOURCE_DATA_DIR ""
#endif
#ifndef SIA_INSTALL_DATA_DIR
#define SIA_INSTALL_DATA_DIR ""
#endif

namespace sia {

namespace fs = std::filesystem;
using nlohmann::json;

std::string placement_id(const std::vector<int>& gpus_per_node) {
  std::vector<int> p;
  for (int g : gpus_per_node) {
    if (g > 0) p.push_back(g);
  }
  if (p.empty()) return "";
  std::vector<int> best = p;
  for (std::size_t r = 1; r < p.size(); ++r) {
    std::vector<int> rot(p.begin() + r, p.end());
    rot.insert(rot.end(), p.begin(), p.begin() + r);
    if (rot < best) best = rot;
  }
  std::string id;
  for (int g : best) id += std::to_string(g);
  return id;
}

double ModelGpu::single_gpu_throughput() const {
  int max_b = 0;
  double max_t = 0;
  int stages = std::max(1, pipeline_stages);
  for (const auto& r : placements) {
    if (r.replicas != stages) continue;
    max_b = std::max(max_b, r.local_bsz);
    max_t = std::max(max_t, r.step_time);
  }
  return max_t > 0 ? max_b / max_t : 0;
}

const ModelGpu* ModelInfo::gpu(const std::string& type) const {
  for (const auto& g : gpus) {
    if (g.name == type) return &g;
  }
  return nullptr;
}

double ModelInfo::progress_at_epoch(int epochs) const {
  if (epochs <= 0 || validation.empty()) return 0;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& v : validation) {
    if (v.epochs.empty()) continue;
    std::size_t idx = std::min<std::size_t>(epochs, v.epochs.size()) - 1;
    best = std::min(best, v.epochs[idx].progress);
  }
  return std::isfinite(best) ? best : 0;
}

double ModelInfo::target_progress() const {
  return progress_at_epoch(max_epochs);
}

Profile ModelInfo::seed_profile() const {
  Profile p;
  p.model = name;
  for (const auto& g : gpus) {
    int stages = std::max(1, g.pipeline_stages);
    for (const auto& r : g.placements) {
      if (r.nodes != 1 || r.replicas != stages) continue;
      p.points.push_back({g.name, 1, 1, r.local_bsz, r.step_time, r.sync_time});
    }
  }
  return p;
}

// --- Model documents -----------------------------------------------------------------

static std::vector<int> placement_digits(const Node& n, const std::string& id) {
  std::vector<int> d;
  for (char c : id) {
    if (c < '1' || c > '9') n.expected("a placement id of digits 1-9");
    d.push_back(c - '0');
  }
  if (d.empty()) n.expected("a non-empty placement id");
  return d;
}

static void check_columns(const Node& table, const std::vector<std::string>& want) {
  Node cols = table.at("columns");
  auto have = cols.as_strings();
  if (have != want) {
    std::string w;
    for (const auto& s : want) w += (w.empty() ? "" : ",") + s;
    cols.expected("the columns [" + w + "]");
  }
}

ModelInfo parse_model(const Node& data) {
  ModelInfo m;
  m.name = data.at("name").as_string();
  m.description = data.string_or("description", "");
  m.source = data.string_or("source", "");
  m.init_batch_size = data.at("init_batch_size").positive_number();
  m.max_batch_size = data.at("max_batch_size").positive_number();
  m.max_epochs = data.at("max_epochs").positive_int32();
  m.restart_cost = data.at("restart_cost").non_negative_number();
  m.restart_penalty = data.number_or("restart_penalty", m.restart_cost);
  m.slowdown = data.get("slowdown") ? data.at("slowdown").positive_number() : 1.0;
  data.at("gpu_types").each([&](const Node& g) {
    ModelGpu gpu;
    gpu.name = g.at("name").as_string();
    gpu.artifact_name = g.string_or("artifact_name", "");
    gpu.gpus_per_node = g.at("gpus_per_node").positive_int32();
    gpu.max_profiled_nodes = g.int32_or("max_profiled_nodes", 1);
    gpu.pipeline_stages = g.int32_or("pipeline_stages", 1);
    gpu.min_local_bsz = g.at("min_local_bsz").positive_int32();
    gpu.max_local_bsz = g.at("max_local_bsz").positive_int32();
    Node pl = g.at("placements");
    check_columns(pl, {"placement", "local_bsz", "step_time", "sync_time"});
    pl.at("rows").each([&](const Node& r) {
      PlacementRow row;
      Node id = r[0];
      row.placement = id.as_string();
      auto digits = placement_digits(id, row.placement);
      row.nodes = static_cast<int>(digits.size());
      for (int d : digits) row.replicas += d;
      row.local_bsz = r[1].positive_int32();
      row.step_time = r[2].positive_number();
      row.sync_time = r[3].non_negative_number();
      gpu.placements.push_back(row);
    });
    if (auto sc = g.get("scalability")) {
      check_columns(*sc, {"nodes", "replicas", "local_bsz", "step_time", "sync_time"});
      sc->at("rows").each([&](const Node& r) {
        ScalabilityRow row;
        row.nodes = r[0].positive_int32();
        row.replicas = r[1].positive_int32();
        row.local_bsz = r[2].positive_int32();
        row.step_time = r[3].positive_number();
        row.sync_time = r[4].non_negative_number();
        gpu.scalability.push_back(row);
      });
    }
    m.gpus.push_back(std::move(gpu));
  });
  data.at("validation").each([&](const Node& v) {
    ValidationTable t;
    t.batch_size = v.at("batch_size").positive_number();
    check_columns(v, {"progress", "iteration", "metric", "grad_sqr", "grad_var"});
    v.at("rows").each([&](const Node& r) {
      EpochRow e;
      e.progress = r[0].non_negative_number();
      e.iteration = r[1].non_negative_number();
      e.metric = r[2].as_number();
      e.grad_sqr = r[3].non_negative_number();
      e.grad_var = r[4].non_negative_number();
      t.epochs.push_back(e);
    });
    if (t.epochs.empty()) v.at("rows").expected("at least one epoch");
    m.validation.push_back(std::move(t));
  });
  std::sort(m.validation.begin(), m.validation.end(),
            [](const auto& a, const auto& b) { return a.batch_size < b.batch_size; });
  return m;
}

json model_to_json(const ModelInfo& m) {
  json out;
  out["name"] = m.name;
  if (!m.description.empty()) out["description"] = m.description;
  if (!m.source.empty()) out["source"] = m.source;
  out["init_batch_size"] = m.init_batch_size;
  out["max_batch_size"] = m.max_batch_size;
  out["max_epochs"] = m.max_epochs;
  out["restart_cost"] = m.restart_cost;
  out["restart_penalty"] = m.restart_penalty;
  out["slowdown"] = m.slowdown;
  out["target_progress"] = m.target_progress();
  json gpus = json::array();
  for (const auto& g : m.gpus) {
    json j;
    j["name"] = g.name;
    if (!g.artifact_name.empty()) j["artifact_name"] = g.artifact_name;
    j["gpus_per_node"] = g.gpus_per_node;
    j["max_profiled_nodes"] = g.max_profiled_nodes;
    j["pipeline_stages"] = g.pipeline_stages;
    j["min_local_bsz"] = g.min_local_bsz;
    j["max_local_bsz"] = g.max_local_bsz;
    json rows = json::array();
    for (const auto& r : g.placements) {
      rows.push_back(json::array({r.placement, r.local_bsz, r.step_time, r.sync_time}));
    }
    j["placements"] = {{"columns", {"placement", "local_bsz", "step_time", "sync_time"}},
                       {"rows", rows}};
    json srows = json::array();
    for (const auto& r : g.scalability) {
      srows.push_back(json::array({r.nodes, r.replicas, r.local_bsz, r.step_time, r.sync_time}));
    }
    j["scalability"] = {{"columns", {"nodes", "replicas", "local_bsz", "step_time", "sync_time"}},
                        {"rows", srows}};
    gpus.push_back(j);
  }
  out["gpu_types"] = gpus;
  json val = json::array();
  for (const auto& v : m.validation) {
    json rows = json::array();
    for (const auto& e : v.epochs) {
      rows.push_back(json::array({e.progress, e.iteration, e.metric, e.grad_sqr, e.grad_var}));
    }
    val.push_back({{"batch_size", v.batch_size},
                   {"columns", {"progress", "iteration", "metric", "grad_sqr", "grad_var"}},
                   {"rows", rows}});
  }
  out["validation"] = val;
  return out;
}

// --- Catalog -------------------------------------------------------------------------

Catalog::Catalog(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    throw Error(ExitStatus::no_input, dir_ + ": model catalog directory not found");
  }
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    files_[e.path().stem().string()] = e.path().string();
  }
}

bool Catalog::has(const std::string& model) const {
  return files_.count(model) || loaded_.count(model);
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : files_) out.push_back(k);
  for (const auto& [k, v] : loaded_) {
    if (!files_.count(k)) out.push_back(k);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const ModelInfo* Catalog::loaded(const std::string& model) const {
  auto it = loaded_.find(model);
  return it == loaded_.end() ? nullptr : it->second.get();
}

const ModelInfo& Catalog::get(const std::string& model, const std::string& context) const {
  if (auto it = loaded_.find(model); it != loaded_.end()) return *it->second;
  auto f = files_.find(model);
  if (f == files_.end()) {
    std::string known;
    for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
    std::string where = context.empty() ? "" : context + ": ";
    throw Error(ExitStatus::data, where + "unknown model \"" + model + "\" (catalog " + dir_ +
                                      " has: " + (known.empty() ? "nothing" : known) + ")");
  }
  Document doc = read_document(f->second, {"Model"});
  auto info = std::make_shared<ModelInfo>(parse_model(doc.data()));
  if (info->name != model) {
    throw Error(ExitStatus::data, f->second + ": name: expected \"" + model +
                                      "\" (the file name), got \"" + info->name + "\"");
  }
  loaded_[model] = info;
  return *info;
}

void Catalog::add(ModelInfo info) {
  std::string name = info.name;
  loaded_[name] = std::make_shared<const ModelInfo>(std::move(info));
}

std::string default_data_dir() {
  if (const char* env = std::getenv("SIA_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "sia";
    if (fs::is_directory(installed / "models", ec)) return installed.string();
  }
  if (fs::is_directory(fs::path(SIA_SOURCE_DATA_DIR) / "models", ec)) return SIA_SOURCE_DATA_DIR;
  if (fs::is_directory(fs::path(SIA_INSTALL_DATA_DIR) / "models", ec)) {
    return SIA_INSTALL_DATA_DIR;
  }
  return "data";
}

std::string default_catalog_dir() {
  if (const char* env = std::getenv("SIA_CATALOG"); env && *env) return env;
  return (fs::path(default_data_dir()) / "models").string();
}

}  // namespace sia
