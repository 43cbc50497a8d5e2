#include "app/sia-profile/profile.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/job_spec.hpp"
#include "model/artifact_import.hpp"
#include "os/atomic_file.hpp"
#include "worker/live_profile.hpp"

namespace sia::app {

namespace fs = std::filesystem;
using nlohmann::json;

int run_import(const ImportArgs& args) {
  std::vector<ModelInfo> models = import_artifact(args.artifact_dir);
  if (args.out_dir.empty()) {
    for (const auto& m : models) {
      cli::write_stdout(dump_document("Model", json::object(), model_to_json(m), false) + "\n");
    }
    return 0;
  }
  std::error_code ec;
  if (!args.check) {
    fs::create_directories(args.out_dir, ec);
    if (ec) throw Error(ExitStatus::cant_create, args.out_dir + ": " + ec.message());
  }
  int differ = 0;
  for (const auto& m : models) {
    std::string text = dump_document("Model", json::object(), model_to_json(m), true) + "\n";
    std::string path = (fs::path(args.out_dir) / (m.name + ".json")).string();
    if (args.check) {
      std::string have;
      try {
        have = read_input(path);
      } catch (const Error&) {
        have.clear();
      }
      if (have != text) {
        cli::write_stderr("sia-profile: " + path + " is out of date\n");
        ++differ;
      }
      continue;
    }
    os::write_file_atomic(path, text, os::kPublicFile);
    cli::info("sia-profile", "wrote " + path);
  }
  return differ ? to_int(ExitStatus::negative) : 0;
}

int run_seed(const SeedArgs& args) {
  Catalog catalog(args.catalog.empty() ? default_catalog_dir() : args.catalog);
  const ModelInfo& m = catalog.get(args.model);
  for (const auto& g : m.gpus) {
    if (g.pipeline_stages > 1) {
      throw Error(ExitStatus::data,
                  args.model +
                      ": a pipeline-parallel model: its catalog rows are per-stage "
                      "micro-batch times, not single-GPU profiles");
    }
  }
  Profile p = m.seed_profile();
  p.job = args.job;
  cli::print_document("Profile", json::object(), profile_to_json(p));
  return 0;
}

namespace {

// The GPU types a live profile is for: --gpu-type, else the cluster's that the job allows.
std::vector<std::string> live_types(const LiveArgs& a, const std::optional<JobSpec>& spec) {
  std::vector<std::string> types = a.gpu_types;
  if (!a.cluster.empty()) {
    Cluster cluster = read_cluster(a.cluster);
    for (const auto& t : types) {
      if (cluster.type_index(t) < 0) {
        throw Error(ExitStatus::usage, "--gpu-type " + t + ": not a GPU type of " + a.cluster +
                                           " (" + cluster.type_names() + ")");
      }
    }
    if (types.empty()) {
      for (const auto& t : cluster.types) {
        if (!spec || spec->allows_type(t.name)) types.push_back(t.name);
      }
    }
  }
  if (types.empty()) {
    throw Error(ExitStatus::usage, "no GPU type to profile for: give --cluster or --gpu-type");
  }
  if (!a.cpu && types.size() > 1) {
    throw Error(ExitStatus::usage,
                "without --cpu, profile one GPU type per run, on a node that has it "
                "(--gpu-type), and combine the runs with --merge");
  }
  return types;
}

std::string make_work_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/sia-profile-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    throw Error(ExitStatus::cant_create, tmpl + ": cannot create a temporary directory");
  }
  return tmpl;
}

}  // namespace

int run_live(const LiveArgs& a) {
  std::optional<JobSpec> spec;
  if (!a.job_file.empty()) {
    Document doc = read_document(a.job_file, {"JobSpec"});
    // The job may have neither a catalog model nor a profile yet: that is what we measure.
    json data = doc.data().json();
    if (data.is_object() && !data.contains("model") && !data.contains("profile")) {
      data["profile"] = json::object();
    }
    spec = parse_job_spec(Node(data, doc.file, "", doc.status));
  }
  worker::LiveProfileOptions o;
  o.gpu_types = live_types(a, spec);
  o.job = !a.job.empty() ? a.job : spec ? spec->name : "sia-worker";
  if (spec) o.model = spec->model;
  o.command = spec && !spec->command.empty()
                  ? spec->command
                  : std::vector<std::string>{worker::default_worker_command()};
  o.cpu = a.cpu;
  o.device = a.device;
  o.start_bsz = a.start_bsz;
  o.max_bsz = a.max_bsz > 0                                 ? a.max_bsz
              : spec && spec->max_batch_size >= a.start_bsz ? static_cast<int>(spec->max_batch_size)
                                                            : 4096;
  if (o.max_bsz < o.start_bsz) {
    throw Error(ExitStatus::usage, "--max-bsz is below --start-bsz");
  }
  o.steps = a.steps;
  o.init_batch_size = spec && spec->init_batch_size > 0 ? spec->init_batch_size : a.start_bsz;
  o.memory_limit_mb = a.memory_limit_mb;
  o.timeout = a.timeout;
  const bool temporary = a.work_dir.empty();
  o.work_dir = temporary ? make_work_dir() : a.work_dir;

  Profile p = worker::live_profile(o, [](const std::string& m) { cli::info("sia-profile", m); });
  if (temporary) {
    std::error_code ec;
    fs::remove_all(o.work_dir, ec);
  }
  const std::string where = o.cpu ? "a CPU slot" : "CUDA device " + std::to_string(o.device);
  cli::info("sia-profile", "job " + o.job + ": " + std::to_string(p.points.size()) +
                               " point(s) for " + std::to_string(o.gpu_types.size()) +
                               " GPU type(s), measured on " + where + " in " +
                               std::to_string(p.cost_seconds) + " s");
  if (!a.merge.empty()) {
    Profile old = parse_profile(read_document(a.merge, {"Profile"}).data());
    for (const auto& pt : old.points) {
      if (std::find(o.gpu_types.begin(), o.gpu_types.end(), pt.gpu_type) == o.gpu_types.end()) {
        p.points.push_back(pt);
      }
    }
    if (!p.gradient) p.gradient = old.gradient;
    if (p.model.empty()) p.model = old.model;
    p.cost_seconds += old.cost_seconds;
  }
  std::sort(p.points.begin(), p.points.end(), [](const ProfilePoint& x, const ProfilePoint& y) {
    return std::tie(x.gpu_type, x.nodes, x.replicas, x.local_bsz) <
           std::tie(y.gpu_type, y.nodes, y.replicas, y.local_bsz);
  });
  cli::print_document("Profile", json::object(), profile_to_json(p));
  return 0;
}

}  // namespace sia::app
