// Profile: measured iteration times of one job (or model) per GPU type, placement shape and
// local (per-GPU) batch size -- the bootstrap data of Sia §3.2 that sia-profile writes and
// sia-estimate fits. step_time is one optimizer step without gradient accumulation
// (compute + gradient synchronisation); sync_time is the synchronisation part of it.
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/node.hpp"

namespace sia {

struct ProfilePoint {
  std::string gpu_type;
  int nodes = 1;
  int replicas = 1;
  int local_bsz = 0;
  double step_time = 0;  // seconds
  double sync_time = 0;  // seconds, <= step_time
};

struct GradientStats {
  double sqr = 0;  // |E[g]|^2
  double var = 0;  // tr(Var[g])
};

struct Profile {
  std::string job;    // optional: the job it was measured for
  std::string model;  // optional: the catalog model it describes
  std::vector<ProfilePoint> points;
  std::optional<GradientStats> gradient;
  double cost_seconds = 0;  // time spent profiling, when known
};

ProfilePoint parse_profile_point(const Node& n);
Profile parse_profile(const Node& data);
nlohmann::json profile_point_to_json(const ProfilePoint& p);
nlohmann::json profile_to_json(const Profile& p);

}  // namespace sia
