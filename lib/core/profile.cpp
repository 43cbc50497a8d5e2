#include "core/profile.hpp"

#include <nlohmann/json.hpp>

namespace sia {

ProfilePoint parse_profile_point(const Node& n) {
  ProfilePoint p;
  p.gpu_type = n.at("gpu_type").as_string();
  if (auto pl = n.get("placement")) {
    // GPUs per node, e.g. [4, 4]: nodes and replicas follow.
    int nodes = 0, replicas = 0;
    pl->each([&](const Node& g) {
      int k = g.positive_int32();
      ++nodes;
      replicas += k;
    });
    if (nodes == 0) pl->expected("a non-empty list of GPUs per node");
    p.nodes = nodes;
    p.replicas = replicas;
  } else {
    p.nodes = n.at("nodes").positive_int32();
    p.replicas = n.at("replicas").positive_int32();
  }
  if (p.replicas < p.nodes) n.at("replicas").expected("at least one replica per node");
  p.local_bsz = n.at("local_bsz").positive_int32();
  p.step_time = n.at("step_time").positive_number();
  Node sync = n.at("sync_time");
  p.sync_time = sync.non_negative_number();
  if (p.sync_time >= p.step_time) sync.expected("a sync_time below step_time");
  return p;
}

Profile parse_profile(const Node& data) {
  Profile p;
  p.job = data.string_or("job", "");
  p.model = data.string_or("model", "");
  if (auto pts = data.get("points")) {
    pts->each([&](const Node& n) { p.points.push_back(parse_profile_point(n)); });
  }
  if (auto g = data.get("gradient")) {
    GradientStats s;
    s.sqr = g->at("grad_sqr").non_negative_number();
    s.var = g->at("grad_var").non_negative_number();
    p.gradient = s;
  }
  p.cost_seconds = data.number_or("cost_seconds", 0);
  return p;
}

nlohmann::json profile_point_to_json(const ProfilePoint& p) {
  return nlohmann::json{{"gpu_type", p.gpu_type},   {"nodes", p.nodes},
                        {"replicas", p.replicas},   {"local_bsz", p.local_bsz},
                        {"step_time", p.step_time}, {"sync_time", p.sync_time}};
}

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json out;
  if (!p.job.empty()) out["job"] = p.job;
  if (!p.model.empty()) out["model"] = p.model;
  auto pts = nlohmann::json::array();
  for (const auto& pt : p.points) pts.push_back(profile_point_to_json(pt));
  out["points"] = pts;
  if (p.gradient) {
    out["gradient"] = {{"grad_sqr", p.gradient->sqr}, {"grad_var", p.gradient->var}};
  }
  if (p.cost_seconds > 0) out["cost_seconds"] = p.cost_seconds;
  return out;
}

}  // namespace sia
