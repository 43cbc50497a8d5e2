#include "model/artifact_import.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace sia {

namespace fs = std::filesystem;

const std::vector<ArtifactGpuType>& artifact_gpu_types() {
  static const std::vector<ArtifactGpuType> types = {
      {"aws", "t4", 4, 16, "NVIDIA T4 16 GB (AWS g4dn.12xlarge, 4 per node)"},
      {"azure", "v100", 8, 5, "NVIDIA V100 32 GB NVLink (Azure ND40rs_v2, 8 per node)"},
      {"dgx-ext", "a100", 8, 2, "NVIDIA A100 40 GB (DGX-A100, 8 per node)"},
      {"dgx", "a100-capped", 8, 2,
       "NVIDIA A100 40 GB (DGX-A100) profiled only up to T4 batch sizes"},
      {"quad", "rtx6000", 4, 1, "NVIDIA Quadro RTX 6000 24 GB (4 per node)"},
      {"rtx", "rtx2080ti", 8, 3, "NVIDIA RTX 2080 Ti 11 GB (8 per node)"},
  };
  return types;
}

std::string sia_gpu_name(const std::string& artifact_name) {
  for (const auto& t : artifact_gpu_types()) {
    if (artifact_name == t.artifact) return t.name;
  }
  return artifact_name;
}

namespace {

struct ModelConstants {
  const char* description;
  int max_epochs;
  double restart_cost;     // Application.rescale_time (simulated delay)
  double restart_penalty;  // the artifact scheduler's restart penalty
  double slowdown;         // simulator_config.SLOWDOWNS
};

const std::map<std::string, ModelConstants>& model_constants() {
  static const std::map<std::string, ModelConstants> m = {
      {"bert", {"BERT fine-tuning on SQuAD", 2, 120, 120, 1.2}},
      {"cifar10", {"ResNet-18 on CIFAR-10", 100, 50, 30, 1.8}},
      {"deepspeech2", {"DeepSpeech2 on CMU-ARCTIC", 80, 25, 25, 1.2}},
      {"gpt_pmp", {"2.8B-parameter GPT, pipeline and data parallel", 2, 30, 30, 1.0}},
      {"imagenet", {"ResNet-50 on ImageNet-1k", 90, 250, 250, 1.2}},
      {"ncf", {"NeuMF on MovieLens", 10, 15, 30, 1.5}},
      {"yolov3", {"YOLOv3 on PASCAL VOC", 50, 80, 45, 1.2}},
  };
  return m;
}

const char* kSource =
    "Measured by the Sia authors (Subramanya et al., SOSP '23) and the Pollux authors: "
    "siasosp23/artifacts@aaf7a0d, sia-simulator/traces/";

std::vector<int> digits_of(const CsvTable& t, std::size_t row, int col) {
  std::vector<int> d;
  const std::string& s = t.cell(row, col);
  std::string digits = s;
  if (auto dot = digits.find('.'); dot != std::string::npos) digits = digits.substr(0, dot);
  for (char c : digits) {
    if (c < '1' || c > '9') t.fail(row, col, "expected a placement id of digits 1-9");
    d.push_back(c - '0');
  }
  if (d.empty()) t.fail(row, col, "expected a placement id");
  return d;
}

}  // namespace

ModelInfo import_artifact_model(const std::string& traces_dir, const std::string& model) {
  fs::path dir = fs::path(traces_dir) / model;
  ModelInfo m;
  m.name = model;
  auto c = model_constants().find(model);
  if (c != model_constants().end()) {
    m.description = c->second.description;
    m.max_epochs = c->second.max_epochs;
    m.restart_cost = c->second.restart_cost;
    m.restart_penalty = c->second.restart_penalty;
    m.slowdown = c->second.slowdown;
  } else {
    m.restart_cost = 30;
    m.restart_penalty = 30;
    m.slowdown = 1.0;
  }
  m.source = std::string(kSource) + model;

  // Validation tables (statistical efficiency), ascending batch size.
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    if (f.rfind("validation-", 0) != 0 || e.path().extension() != ".csv") continue;
    std::string b = f.substr(11, f.size() - 11 - 4);
    ValidationTable v;
    try {
      v.batch_size = std::stod(b);
    } catch (...) {
      throw Error(ExitStatus::data, e.path().string() + ": expected validation-<batch>.csv");
    }
    CsvTable t = read_csv(e.path().string());
    int cp = t.column("progress"), ci = t.column("iteration"), cm = t.column("metric");
    int cs = t.column("grad_sqr"), cv = t.column("grad_var");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      v.epochs.push_back(
          {t.number(r, cp), t.number(r, ci), t.number(r, cm), t.number(r, cs), t.number(r, cv)});
    }
    m.validation.push_back(std::move(v));
  }
  if (m.validation.empty()) {
    throw Error(ExitStatus::data, dir.string() + ": no validation-<batch>.csv files");
  }
  std::sort(m.validation.begin(), m.validation.end(),
            [](const auto& a, const auto& b) { return a.batch_size < b.batch_size; });
  m.init_batch_size = m.validation.front().batch_size;
  m.max_batch_size = m.validation.back().batch_size;
  if (m.max_epochs == 0) {
    std::size_t rows = SIZE_MAX;
    for (const auto& v : m.validation) rows = std::min(rows, v.epochs.size());
    m.max_epochs = static_cast<int>(rows);
  }

  for (const auto& type : artifact_gpu_types()) {
    fs::path pf = dir / (std::string("placements-") + type.artifact + ".csv");
    if (!fs::exists(pf)) continue;
    ModelGpu g;
    g.name = type.name;
    g.artifact_name = type.artifact;
    g.gpus_per_node = type.gpus_per_node;
    g.max_profiled_nodes = type.max_profiled_nodes;
    if (model == "gpt_pmp") g.pipeline_stages = std::string(type.artifact) == "rtx" ? 8 : 2;
    CsvTable t = read_csv(pf.string());
    int cpl = t.column("placement"), cb = t.column("local_bsz");
    int cst = t.column("step_time"), csy = t.column("sync_time");
    int min_b = INT32_MAX, max_b = 0;
    for (std::size_t r = 0; r < t.rows(); ++r) {
      PlacementRow row;
      auto d = digits_of(t, r, cpl);
      row.placement = placement_id(d);
      row.nodes = static_cast<int>(d.size());
      for (int x : d) row.replicas += x;
      row.local_bsz = static_cast<int>(t.integer(r, cb));
      row.step_time = t.number(r, cst);
      row.sync_time = t.number(r, csy);
      min_b = std::min(min_b, row.local_bsz);
      max_b = std::max(max_b, row.local_bsz);
      g.placements.push_back(row);
    }
    if (g.placements.empty()) t.fail(0, cpl, "no rows");
    g.min_local_bsz = min_b;
    g.max_local_bsz = max_b;
    // Overrides the artifact applies in code (sia-simulator.md §1.6).
    if (model == "deepspeech2" && g.artifact_name == "rtx") g.max_local_bsz = 57;
    if (model == "gpt_pmp") g.max_local_bsz = 48;
    fs::path sf = dir / (std::string("scalability-") + type.artifact + ".csv");
    if (fs::exists(sf)) {
      CsvTable s = read_csv(sf.string());
      int sn = s.column("num_nodes"), sr = s.column("num_replicas"), sb = s.column("local_bsz");
      int sst = s.column("step_time"), ssy = s.column("sync_time");
      for (std::size_t r = 0; r < s.rows(); ++r) {
        g.scalability.push_back(
            {static_cast<int>(s.integer(r, sn)), static_cast<int>(s.integer(r, sr)),
             static_cast<int>(s.integer(r, sb)), s.number(r, sst), s.number(r, ssy)});
      }
    }
    m.gpus.push_back(std::move(g));
  }
  if (m.gpus.empty()) {
    throw Error(ExitStatus::data, dir.string() + ": no placements-<gpu>.csv files");
  }
  return m;
}

std::vector<ModelInfo> import_artifact(const std::string& dir) {
  fs::path traces = fs::path(dir) / "traces";
  std::error_code ec;
  if (!fs::is_directory(traces, ec)) traces = fs::path(dir);
  if (!fs::is_directory(traces, ec)) {
    throw Error(ExitStatus::no_input, dir + ": not a directory");
  }
  std::vector<std::string> models;
  for (const auto& e : fs::directory_iterator(traces)) {
    if (!e.is_directory()) continue;
    bool has_validation = false;
    for (const auto& f : fs::directory_iterator(e.path())) {
      if (f.path().filename().string().rfind("validation-", 0) == 0) has_validation = true;
    }
    if (has_validation) models.push_back(e.path().filename().string());
  }
  if (models.empty()) {
    throw Error(ExitStatus::no_input,
                traces.string() + ": no model folders (expected <model>/validation-*.csv)");
  }
  std::sort(models.begin(), models.end());
  std::vector<ModelInfo> out;
  for (const auto& m : models) out.push_back(import_artifact_model(traces.string(), m));
  return out;
}

}  // namespace sia
