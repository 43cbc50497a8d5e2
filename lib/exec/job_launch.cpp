#include "exec/job_launch.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace sia::exec {

using nlohmann::json;

int JobLaunch::world_size() const {
  int n = 0;
  for (const auto& ng : nodes) n += static_cast<int>(ng.gpus.size());
  return n;
}

std::vector<int> JobLaunch::local_gpus() const {
  std::vector<int> out;
  for (const auto& ng : nodes) {
    if (ng.node == node) out.insert(out.end(), ng.gpus.begin(), ng.gpus.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string join_ints(const std::vector<int>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}

static std::string nodes_text(const std::vector<NodeGpus>& nodes) {
  std::string out;
  for (const auto& ng : nodes) out += (out.empty() ? "" : " ") + ng.node + ":" + join_ints(ng.gpus);
  return out;
}

std::string number_text(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) {
    return std::to_string(static_cast<long long>(v));
  }
  return json(v).dump();
}

static bool has_batch(const JobLaunch& l) {
  return !l.batch.empty();
}

bool can_resize(const JobLaunch& running, const JobLaunch& wanted) {
  return !running.batch_plan.empty() && running.batch.local > 0 && wanted.batch.local > 0;
}

static std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string batch_change(const JobLaunch& a, const JobLaunch& b) {
  return sia::batch_change(a.batch, b.batch);
}

std::string launch_change(const JobLaunch& a, const JobLaunch& b) {
  std::vector<std::string> why;
  if (a.gpu_type != b.gpu_type) why.push_back("GPU type " + a.gpu_type + " -> " + b.gpu_type);
  auto ga = a.local_gpus(), gb = b.local_gpus();
  if (ga != gb) {
    const char* what = gb.size() < ga.size()   ? "shrank: GPUs "
                       : gb.size() > ga.size() ? "grew: GPUs "
                                               : "moved: GPUs ";
    why.push_back(what + join_ints(ga) + " -> " + join_ints(gb));
  }
  bool same_nodes = a.nodes.size() == b.nodes.size() &&
                    std::equal(a.nodes.begin(), a.nodes.end(), b.nodes.begin(),
                               [](const NodeGpus& x, const NodeGpus& y) {
                                 return x.node == y.node && x.gpus == y.gpus;
                               });
  if (!same_nodes && ga == gb) {
    why.push_back("nodes " + nodes_text(a.nodes) + " -> " + nodes_text(b.nodes));
  }
  // Batch settings given on one side only (the worker chose its batch at its start), or
  // without a local batch, or workers started without SIA_BATCH_PLAN: a batch plan cannot
  // carry the change.
  if (has_batch(a) != has_batch(b) || (has_batch(b) && !can_resize(a, b))) {
    if (auto batch = batch_change(a, b); !batch.empty()) why.push_back(batch);
  }
  if (a.command != b.command) why.push_back("command changed");
  if (a.master_addr != b.master_addr && same_nodes) {
    why.push_back("master address " + a.master_addr + " -> " + b.master_addr);
  }
  if (a.attempt != b.attempt) {
    why.push_back("attempt " + std::to_string(a.attempt) + " -> " + std::to_string(b.attempt));
  }
  return joined(why);
}

json job_launch_to_json(const JobLaunch& l) {
  json nodes = json::array();
  for (const auto& ng : l.nodes) nodes.push_back({{"name", ng.node}, {"gpus", ng.gpus}});
  json ranks = json::array();
  for (const auto& r : l.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"local_rank", r.local_rank},
                     {"gpus", r.gpus},
                     {"log", r.log},
                     {"env", r.env}});
  }
  json out = {{"job", l.job},
              {"node", l.node},
              {"gpu_type", l.gpu_type},
              {"nodes", std::move(nodes)},
              {"command", l.command},
              {"master_addr", l.master_addr},
              {"attempt", l.attempt},
              {"generation", l.generation},
              {"master_port", l.master_port},
              {"restore", l.restore},
              {"expected_step", l.expected_step},
              {"stop_fraction", l.stop_fraction},
              {"restore_missing", l.restore_missing},
              {"cwd", l.cwd},
              {"ckpt_dir", l.ckpt_dir},
              {"report", l.report},
              {"batch_plan", l.batch_plan},
              {"plan", l.plan},
              {"report_interval", l.report_interval},
              {"grace", l.grace},
              {"ranks", std::move(ranks)},
              {"run_as", l.run_as ? run_as_to_json(*l.run_as) : json(nullptr)}};
  put_batch_setting(out, l.batch);
  return out;
}

JobLaunch parse_job_launch(const Node& d) {
  JobLaunch l;
  l.job = d.at("job").as_string();
  l.node = d.at("node").as_string();
  l.gpu_type = d.at("gpu_type").as_string();
  d.at("nodes").each([&](const Node& n) {
    NodeGpus ng;
    ng.node = n.at("name").as_string();
    n.at("gpus").each([&](const Node& g) { ng.gpus.push_back(g.non_negative_int32()); });
    l.nodes.push_back(std::move(ng));
  });
  l.command = d.at("command").as_strings();
  l.batch = parse_batch_setting(d);
  l.master_addr = d.string_or("master_addr", "");
  l.attempt = d.int32_or("attempt", 0);
  l.generation = d.at("generation").positive_int32();
  l.master_port = d.int32_or("master_port", 0);
  l.restore = d.bool_or("restore", false);
  l.cwd = d.string_or("cwd", "");
  l.ckpt_dir = d.string_or("ckpt_dir", "");
  l.report = d.string_or("report", "");
  l.batch_plan = d.string_or("batch_plan", "");
  l.plan = d.int32_or("plan", 0);
  l.expected_step = d.int_or("expected_step", 0);
  l.stop_fraction = d.number_or("stop_fraction", 0);
  l.restore_missing = d.bool_or("restore_missing", false);
  l.report_interval = d.number_or("report_interval", 30);
  l.grace = d.number_or("grace", 120);
  if (auto r = d.get("run_as"); r && !r->is_null()) l.run_as = parse_run_as(*r);
  d.at("ranks").each([&](const Node& r) {
    RankLaunch rl;
    rl.rank = r.at("rank").non_negative_int32();
    rl.local_rank = r.at("local_rank").non_negative_int32();
    r.at("gpus").each([&](const Node& g) { rl.gpus.push_back(g.non_negative_int32()); });
    rl.log = r.at("log").as_string();
    if (auto env = r.get("env")) {
      for (const auto& k : env->keys()) rl.env[k] = env->at(k).as_string();
    }
    l.ranks.push_back(std::move(rl));
  });
  return l;
}

}  // namespace sia::exec
