#include "core/job_model_info.hpp"

#include <nlohmann/json.hpp>

#include "core/json_writer.hpp"

namespace sia {

using nlohmann::json;

static std::array<double, 7> params_of(const Node& p) {
  if (p.size() != 7) p.expected("7 parameters");
  std::array<double, 7> a{};
  for (std::size_t i = 0; i < 7; ++i) a[i] = p[i].as_number();
  return a;
}

JobModelInfo parse_job_model_info(const Node& n, const std::vector<std::string>& types) {
  JobModelInfo m;
  m.init_batch_size = n.number_or("init_batch_size", 0);
  m.max_batch_size = n.number_or("max_batch_size", 0);
  m.max_observed_replicas = n.int32_or("max_observed_replicas", 0);
  if (auto g = n.get("gradient")) {
    m.gradient = GradientStats{g->at("grad_sqr").non_negative_number(),
                               g->at("grad_var").non_negative_number()};
  }
  if (auto b = n.get("blind")) {
    m.blind_known = true;
    m.blind_params = params_of(b->at("params"));
    m.blind_min_local = b->int32_or("min_local", 1);
    m.blind_max_local = b->int32_or("max_local", 1);
  }
  m.types.resize(types.size());
  if (auto ts = n.get("types")) {
    ts->each([&](const Node& t) {
      std::string name = t.at("gpu_type").as_string();
      for (std::size_t k = 0; k < types.size(); ++k) {
        if (types[k] != name) continue;
        TypeModelInfo& x = m.types[k];
        if (auto p = t.get("params")) {
          x.known = true;
          x.params = params_of(*p);
        }
        x.min_local = t.int32_or("min_local", 1);
        x.max_local = t.int32_or("max_local", 1);
        x.stages = t.int32_or("stages", 1);
        x.max_replicas = t.int32_or("max_replicas", 1);
      }
    });
  }
  return m;
}

void write_job_model_info(JsonWriter& w, const JobModelInfo& m,
                          const std::vector<std::string>& types) {
  // Keys in sorted order, as the tree writer emits them.
  auto params = [&](const std::array<double, 7>& p) {
    w.begin_array(true);
    for (double v : p) w.number(v);
    w.end_array();
  };
  w.begin_object();
  w.key("blind");
  if (m.blind_known) {
    w.begin_object();
    w.key("max_local");
    w.integer(m.blind_max_local);
    w.key("min_local");
    w.integer(m.blind_min_local);
    w.key("params");
    params(m.blind_params);
    w.end_object();
  } else {
    w.null();
  }
  w.key("gradient");
  if (m.gradient) {
    w.begin_object();
    w.key("grad_sqr");
    w.number(m.gradient->sqr);
    w.key("grad_var");
    w.number(m.gradient->var);
    w.end_object();
  } else {
    w.null();
  }
  w.key("init_batch_size");
  w.number(m.init_batch_size);
  w.key("max_batch_size");
  w.number(m.max_batch_size);
  w.key("max_observed_replicas");
  w.integer(m.max_observed_replicas);
  w.key("types");
  w.begin_array();
  for (std::size_t t = 0; t < m.types.size(); ++t) {
    const auto& x = m.types[t];
    w.begin_object();
    w.key("gpu_type");
    w.string(types[t]);
    w.key("max_local");
    w.integer(x.max_local);
    w.key("max_replicas");
    w.integer(x.max_replicas);
    w.key("min_local");
    w.integer(x.min_local);
    w.key("params");
    if (x.known) {
      params(x.params);
    } else {
      w.null();
    }
    w.key("stages");
    w.integer(x.stages);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace sia
