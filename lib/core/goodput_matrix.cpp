#include "core/goodput_matrix.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/app_spec.hpp"
#include "core/document.hpp"
#include "core/json_writer.hpp"

namespace sia {

using nlohmann::json;

const char* to_string(GoodputSource s) {
  switch (s) {
    case GoodputSource::model:
      return "model";
    case GoodputSource::bootstrap:
      return "bootstrap";
    case GoodputSource::fallback:
      return "default";
  }
  return "model";
}

Config parse_config_ref(const Node& n, const Cluster& cluster) {
  Config c;
  Node type = n.at("gpu_type");
  c.type = cluster.type_index(type.as_string());
  if (c.type < 0) {
    type.fail("unknown GPU type \"" + type.as_string() + "\" (cluster has " + cluster.type_names() +
              ")");
  }
  c.nodes = n.at("nodes").positive_int32();
  Node gpus = n.at("gpus");
  c.gpus = gpus.positive_int32();
  if (c.gpus < c.nodes) gpus.expected("at least one GPU per node");
  if (c.nodes > cluster.types[c.type].node_count) {
    n.at("nodes").fail("configuration needs " + std::to_string(c.nodes) + " nodes, GPU type \"" +
                       cluster.types[c.type].name + "\" has " +
                       std::to_string(cluster.types[c.type].node_count));
  }
  if (c.gpus > c.nodes * cluster.types[c.type].gpus_per_node) {
    gpus.fail(std::to_string(c.gpus) + " GPUs do not fit on " + std::to_string(c.nodes) +
              " node(s) of " + std::to_string(cluster.types[c.type].gpus_per_node));
  }
  return c;
}

json config_ref_to_json(const Config& c, const Cluster& cluster) {
  return json{{"gpu_type", cluster.types[c.type].name}, {"nodes", c.nodes}, {"gpus", c.gpus}};
}

static std::vector<std::string> type_names_of(const Cluster& c) {
  std::vector<std::string> out;
  for (const auto& t : c.types) out.push_back(t.name);
  return out;
}

std::string goodput_matrix_document(const GoodputMatrix& m, const json& metadata, bool pretty) {
  const std::vector<std::string> types = type_names_of(m.cluster);
  JsonWriter w(pretty);
  // Room for the whole (compact) document at once: about 230 bytes an entry and 1.3 kB a
  // row besides, so the text is not copied as it grows.
  std::size_t entries = 0;
  for (const auto& r : m.jobs) entries += r.entries.size() + r.fixed.size();
  w.str().reserve(4096 + 256 * entries + 1536 * m.jobs.size());
  w.begin_object();
  w.key("apiVersion");
  w.string(kApiVersion);
  w.key("kind");
  w.string("GoodputMatrix");
  w.key("metadata");
  w.raw(metadata.is_null() ? json::object() : metadata);
  w.key("data");
  w.begin_object();
  w.key("cluster");
  w.raw(cluster_to_json(m.cluster));
  w.key("jobs");
  w.begin_array();
  for (const auto& r : m.jobs) {
    w.begin_object();
    w.key("adaptivity");
    w.string(to_string(r.adaptivity));
    w.key("age");
    w.number(r.age);
    if (r.app) {
      w.key("app");
      json app{{"name", r.app->name},
               {"trials", r.app->trials},
               {"eta", r.app->eta},
               {"rungs", r.app->rungs},
               {"phase", r.app->phase}};
      if (r.app->brackets > 1) {
        app["bracket"] = r.app->bracket;
        app["brackets"] = r.app->brackets;
      }
      w.raw(app);
    }
    w.key("attained_service");
    w.number(r.attained_service);
    w.key("current");
    if (r.current) {
      w.raw(config_ref_to_json(*r.current, m.cluster));
    } else {
      w.null();
    }
    auto entry_list = [&](const std::vector<GoodputEntry>& list) {
      w.begin_array();
      for (const auto& e : list) {
        w.begin_object();
        w.key("accum_steps");
        w.integer(e.batch.accum_steps);
        w.key("batch_size");
        w.number(static_cast<double>(e.batch.global));  // a float on the wire, as put_batch_setting
        w.key("goodput");
        w.number(e.goodput);
        w.key("gpu_type");
        w.string(m.cluster.types[e.config.type].name);
        w.key("gpus");
        w.integer(e.config.gpus);
        w.key("local_bsz");
        w.integer(e.batch.local);
        w.key("nodes");
        w.integer(e.config.nodes);
        w.key("raw_goodput");
        w.number(e.raw_goodput);
        w.key("source");
        w.string(to_string(e.source));
        w.key("throughput");
        w.number(e.throughput);
        w.end_object();
      }
      w.end_array();
    };
    w.key("entries");
    entry_list(r.entries);
    w.key("fixed");
    entry_list(r.fixed);
    w.key("fixed_batch");
    w.number(r.fixed_batch);
    w.key("fixed_gpus");
    w.integer(r.fixed_gpus);
    w.key("max_gpus");
    w.integer(r.max_gpus);
    w.key("min_gpus");
    w.integer(r.min_gpus);
    w.key("model");
    write_job_model_info(w, r.model, types);
    w.key("name");
    w.string(r.job);
    w.key("normalizer");
    w.number(r.normalizer);
    w.key("preemptible");
    w.boolean(r.preemptible);
    w.key("priority");
    w.integer(r.priority);
    w.key("progress");
    if (r.progress) {
      w.begin_object();
      w.key("done");
      w.number(r.progress->done);
      w.key("total");
      w.number(r.progress->total);
      w.end_object();
    } else {
      w.null();
    }
    w.key("restart_penalty");
    w.number(r.restart_penalty);
    w.key("restarts");
    w.integer(r.restarts);
    w.key("restoring");
    w.boolean(r.restoring);
    w.end_object();
  }
  w.end_array();
  w.key("order");
  w.begin_array(true);
  for (const auto& n : m.order) w.string(n);
  w.end_array();
  w.key("profile");
  w.string(m.profile);
  w.end_object();
  w.end_object();
  return std::move(w.str());
}

AppRef parse_app_ref(const Node& a) {
  AppRef ref;
  ref.name = a.at("name").as_string();
  ref.trials = static_cast<int>(a.at("trials").int_in(1, kMaxAppTrials));
  ref.eta = static_cast<int>(a.at("eta").int_in(2, 100));
  ref.rungs = static_cast<int>(a.at("rungs").int_in(1, 20));
  ref.phase = static_cast<int>(a.at("phase").int_in(0, ref.rungs - 1));
  if (auto n = a.get("brackets")) ref.brackets = static_cast<int>(n->int_in(1, 20));
  if (auto n = a.get("bracket")) ref.bracket = static_cast<int>(n->int_in(0, ref.brackets - 1));
  return ref;
}

GoodputMatrix parse_goodput_matrix(const Node& data) {
  GoodputMatrix m;
  m.cluster = parse_cluster(data.at("cluster"));
  m.profile = data.string_or("profile", "default");
  std::set<std::string> names;
  data.at("jobs").each([&](const Node& j) {
    GoodputRow r;
    Node name = j.at("name");
    r.job = name.as_string();
    if (!names.insert(r.job).second) name.fail("duplicate job \"" + r.job + "\"");
    if (auto a = j.get("adaptivity")) {
      std::string v = a->one_of({"adaptive", "strong-scaling", "rigid"});
      r.adaptivity = v == "rigid"      ? Adaptivity::rigid
                     : v == "adaptive" ? Adaptivity::adaptive
                                       : Adaptivity::strong_scaling;
    }
    r.priority = j.int32_or("priority", 0);
    if (auto v = j.get("age")) r.age = v->non_negative_number();
    if (auto v = j.get("restarts")) r.restarts = v->non_negative_int32();
    if (auto v = j.get("restart_penalty")) r.restart_penalty = v->non_negative_number();
    if (auto v = j.get("attained_service")) r.attained_service = v->non_negative_number();
    r.preemptible = j.bool_or("preemptible", true);
    r.restoring = j.bool_or("restoring", false);
    if (auto c = j.get("current")) r.current = parse_config_ref(*c, m.cluster);
    if (auto v = j.get("min_gpus")) r.min_gpus = v->positive_int32();
    if (auto v = j.get("max_gpus")) r.max_gpus = v->positive_int32();
    r.normalizer = j.number_or("normalizer", 1.0);
    const std::vector<std::string> types = type_names_of(m.cluster);
    if (auto mi = j.get("model")) r.model = parse_job_model_info(*mi, types);
    if (r.model.types.size() != types.size()) r.model.types.resize(types.size());
    if (auto p = j.get("progress")) {
      r.progress =
          JobProgress{p->at("done").non_negative_number(), p->at("total").non_negative_number()};
    }
    if (auto a = j.get("app")) r.app = parse_app_ref(*a);
    r.fixed_gpus = j.int32_or("fixed_gpus", 0);
    r.fixed_batch = j.number_or("fixed_batch", 0);
    auto parse_entry = [&](const Node& e) {
      GoodputEntry x;
      x.config = parse_config_ref(e, m.cluster);
      x.goodput = e.at("goodput").non_negative_number();
      x.raw_goodput = e.number_or("raw_goodput", x.goodput);
      x.throughput = e.number_or("throughput", 0);
      x.batch = parse_batch_setting(e);
      if (auto s = e.get("source")) {
        std::string v = s->one_of({"model", "bootstrap", "default"});
        x.source = v == "model"       ? GoodputSource::model
                   : v == "bootstrap" ? GoodputSource::bootstrap
                                      : GoodputSource::fallback;
      }
      return x;
    };
    j.at("entries").each([&](const Node& e) { r.entries.push_back(parse_entry(e)); });
    if (auto f = j.get("fixed")) f->each([&](const Node& e) { r.fixed.push_back(parse_entry(e)); });
    m.jobs.push_back(std::move(r));
  });
  std::sort(m.jobs.begin(), m.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  if (auto o = data.get("order")) m.order = o->as_strings();
  return m;
}

}  // namespace sia
