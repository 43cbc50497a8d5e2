#include "core/goodput_matrix_reader.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_cursor.hpp"

namespace sia {

namespace {

using Cursor = JsonCursor;

[[noreturn]] void decline() {
  JsonCursor::decline();
}

// The Node accessors parse_goodput_matrix uses, over the cursor; where the tree reader
// would throw, these decline.
double number_of(Cursor& c) {
  return c.number().as_double();
}
double non_negative(Cursor& c) {
  double d = number_of(c);
  if (d < 0) decline();
  return d;
}
int int32_of(Cursor& c) {
  std::int64_t v = c.number().as_int();
  if (v < INT32_MIN || v > INT32_MAX) decline();
  return static_cast<int>(v);
}
int positive_int32(Cursor& c) {
  std::int64_t v = c.number().as_int();
  if (v < 1 || v > INT32_MAX) decline();
  return static_cast<int>(v);
}
int non_negative_int32(Cursor& c) {
  std::int64_t v = c.number().as_int();
  if (v < 0 || v > INT32_MAX) decline();
  return static_cast<int>(v);
}
// A value read through `read` unless it is null (absent), which keeps `out` as it is.
template <class T, class F>
void optional(Cursor& c, T& out, F read) {
  if (!c.null()) out = read(c);
}
// A required field: null is as missing.
template <class F>
auto required(Cursor& c, F read) {
  if (c.null()) decline();
  return read(c);
}
std::string string_of(Cursor& c) {
  if (c.peek() != '"') decline();
  return c.string();
}
bool boolean_of(Cursor& c) {
  char k = c.peek();
  if (k != 't' && k != 'f') decline();
  return c.boolean();
}
// Node::one_of, onto the value named; null keeps `out`.
template <class T>
void optional_choice(Cursor& c, T& out,
                     std::initializer_list<std::pair<std::string_view, T>> choices) {
  if (c.null()) return;
  const std::string v = string_of(c);
  for (const auto& [name, value] : choices) {
    if (v == name) {
      out = value;
      return;
    }
  }
  decline();
}
// An object or array read with nlohmann and handed to a Node reader: for the small,
// rare parts (the cluster, a row's app).
template <class F>
auto via_tree(Cursor& c, F read) {
  std::string_view text = c.skip();
  const nlohmann::json value = parse_json_bounded(text);
  if (value.is_discarded()) decline();
  try {
    return read(Node(value, "", ""));
  } catch (const Error&) {
    decline();
  }
}

class MatrixReader {
 public:
  explicit MatrixReader(Cursor& c) : c_(c) {}

  GoodputMatrix data() {
    GoodputMatrix m;
    bool have_cluster = false, have_jobs = false;
    c_.object([&](std::string_view k) {
      if (k == "cluster") {
        if (c_.null()) decline();  // as missing
        m.cluster = via_tree(c_, [](const Node& n) { return parse_cluster(n); });
        have_cluster = true;
        for (const auto& t : m.cluster.types) types_.push_back(t.name);
      } else if (k == "jobs") {
        if (!have_cluster) decline();
        c_.array([&] { m.jobs.push_back(row(m.cluster)); });
        have_jobs = true;
      } else if (k == "order") {
        if (!c_.null()) c_.array([&] { m.order.push_back(string_of(c_)); });
      } else if (k == "profile") {
        optional(c_, m.profile, string_of);
      } else {
        c_.skip();
      }
    });
    if (!have_jobs) decline();
    std::sort(m.jobs.begin(), m.jobs.end(),
              [](const auto& a, const auto& b) { return a.job < b.job; });
    return m;
  }

 private:
  GoodputRow row(const Cluster& cluster) {
    GoodputRow r;
    bool have_name = false, have_entries = false, have_model = false;
    c_.object([&](std::string_view k) {
      if (k == "name") {
        r.job = string_of(c_);
        have_name = true;
      } else if (k == "entries") {
        c_.array([&] { r.entries.push_back(entry(cluster)); });
        have_entries = true;
      } else if (k == "fixed") {
        if (!c_.null()) c_.array([&] { r.fixed.push_back(entry(cluster)); });
      } else if (k == "model") {
        if (!c_.null()) {
          r.model = model();
          have_model = true;
        }
      } else if (k == "adaptivity") {
        optional_choice(c_, r.adaptivity,
                        {{"adaptive", Adaptivity::adaptive},
                         {"strong-scaling", Adaptivity::strong_scaling},
                         {"rigid", Adaptivity::rigid}});
      } else if (k == "priority") {
        optional(c_, r.priority, int32_of);
      } else if (k == "age") {
        optional(c_, r.age, non_negative);
      } else if (k == "restarts") {
        optional(c_, r.restarts, non_negative_int32);
      } else if (k == "restart_penalty") {
        optional(c_, r.restart_penalty, non_negative);
      } else if (k == "attained_service") {
        optional(c_, r.attained_service, non_negative);
      } else if (k == "preemptible") {
        optional(c_, r.preemptible, boolean_of);
      } else if (k == "restoring") {
        optional(c_, r.restoring, boolean_of);
      } else if (k == "current") {
        if (!c_.null()) r.current = config(cluster);
      } else if (k == "min_gpus") {
        optional(c_, r.min_gpus, positive_int32);
      } else if (k == "max_gpus") {
        optional(c_, r.max_gpus, positive_int32);
      } else if (k == "normalizer") {
        optional(c_, r.normalizer, number_of);
      } else if (k == "progress") {
        if (!c_.null()) {
          const auto [done, total] = non_negative_pair("done", "total");
          r.progress = JobProgress{done, total};
        }
      } else if (k == "app") {
        if (!c_.null()) r.app = via_tree(c_, [](const Node& n) { return parse_app_ref(n); });
      } else if (k == "fixed_gpus") {
        optional(c_, r.fixed_gpus, int32_of);
      } else if (k == "fixed_batch") {
        optional(c_, r.fixed_batch, number_of);
      } else {
        c_.skip();
      }
    });
    if (!have_name || !have_entries || !names_.insert(r.job).second) decline();
    if (!have_model) r.model.types.resize(types_.size());
    return r;
  }

  // A configuration as parse_config_ref reads it: {"gpu_type", "nodes", "gpus"}, in any
  // order, with the rest of an entry's fields handed to `other`.
  template <class F>
  Config config_and(const Cluster& cluster, F other) {
    Config x;
    x.type = -1;
    x.nodes = 0;
    x.gpus = 0;
    c_.object([&](std::string_view k) {
      if (k == "gpu_type") {
        x.type = cluster.type_index(string_of(c_));
        if (x.type < 0) decline();
      } else if (k == "nodes") {
        x.nodes = positive_int32(c_);
      } else if (k == "gpus") {
        x.gpus = positive_int32(c_);
      } else {
        other(k);
      }
    });
    if (x.type < 0 || x.nodes < 1 || x.gpus < 1 || x.gpus < x.nodes) decline();
    const GpuType& t = cluster.types[x.type];
    if (x.nodes > t.node_count || x.gpus > x.nodes * t.gpus_per_node) decline();
    return x;
  }

  Config config(const Cluster& cluster) {
    return config_and(cluster, [&](std::string_view) { c_.skip(); });
  }

  GoodputEntry entry(const Cluster& cluster) {
    GoodputEntry e;
    bool have_goodput = false, have_raw = false;
    e.config = config_and(cluster, [&](std::string_view k) {
      if (k == "goodput") {
        e.goodput = required(c_, non_negative);
        have_goodput = true;
      } else if (k == "raw_goodput") {
        have_raw = !c_.null();
        if (have_raw) e.raw_goodput = number_of(c_);
      } else if (k == "throughput") {
        optional(c_, e.throughput, number_of);
      } else if (k == "batch_size") {
        double wire = 0;
        optional(c_, wire, number_of);
        auto global = global_batch_of(wire);
        if (!global) decline();  // the tree reader names the field
        e.batch.global = *global;
      } else if (k == "local_bsz") {
        optional(c_, e.batch.local, int32_of);
        if (e.batch.local < 0) decline();
      } else if (k == "accum_steps") {
        optional(c_, e.batch.accum_steps, int32_of);
        if (e.batch.accum_steps < 0 || e.batch.accum_steps > kMaxAccumSteps) decline();
      } else if (k == "source") {
        optional_choice(c_, e.source,
                        {{"model", GoodputSource::model},
                         {"bootstrap", GoodputSource::bootstrap},
                         {"default", GoodputSource::fallback}});
      } else {
        c_.skip();
      }
    });
    if (!have_goodput) decline();
    if (!have_raw) e.raw_goodput = e.goodput;
    return e;
  }

  // An object of two required numbers >= 0 (a row's progress, a model's gradient).
  std::array<double, 2> non_negative_pair(std::string_view first, std::string_view second) {
    std::array<double, 2> v{};
    bool have[2] = {false, false};
    c_.object([&](std::string_view k) {
      const int i = k == first ? 0 : k == second ? 1 : -1;
      if (i < 0) {
        c_.skip();
        return;
      }
      v[i] = required(c_, non_negative);
      have[i] = true;
    });
    if (!have[0] || !have[1]) decline();
    return v;
  }

  std::array<double, 7> params() {
    std::array<double, 7> a{};
    std::size_t n = 0;
    c_.array([&] {
      if (n == a.size()) decline();
      a[n++] = number_of(c_);
    });
    if (n != a.size()) decline();
    return a;
  }

  // parse_job_model_info.
  JobModelInfo model() {
    JobModelInfo m;
    m.types.resize(types_.size());
    c_.object([&](std::string_view k) {
      if (k == "init_batch_size") {
        optional(c_, m.init_batch_size, number_of);
      } else if (k == "max_batch_size") {
        optional(c_, m.max_batch_size, number_of);
      } else if (k == "max_observed_replicas") {
        optional(c_, m.max_observed_replicas, int32_of);
      } else if (k == "gradient") {
        if (!c_.null()) {
          const auto [sqr, var] = non_negative_pair("grad_sqr", "grad_var");
          m.gradient = GradientStats{sqr, var};
        }
      } else if (k == "blind") {
        if (!c_.null()) blind(m);
      } else if (k == "types") {
        if (!c_.null()) c_.array([&] { type_model(m); });
      } else {
        c_.skip();
      }
    });
    return m;
  }

  void blind(JobModelInfo& m) {
    bool have_params = false;
    c_.object([&](std::string_view k) {
      if (k == "params") {
        if (c_.null()) decline();
        m.blind_params = params();
        have_params = true;
      } else if (k == "min_local") {
        optional(c_, m.blind_min_local, int32_of);
      } else if (k == "max_local") {
        optional(c_, m.blind_max_local, int32_of);
      } else {
        c_.skip();
      }
    });
    if (!have_params) decline();
    m.blind_known = true;
  }

  // One of "types": applied to the cluster's type of that name, if any (later ones win).
  void type_model(JobModelInfo& m) {
    TypeModelInfo x;
    std::optional<std::array<double, 7>> p;
    std::string name;
    bool have_name = false;
    c_.object([&](std::string_view k) {
      if (k == "gpu_type") {
        name = string_of(c_);
        have_name = true;
      } else if (k == "params") {
        if (!c_.null()) p = params();
      } else if (k == "min_local") {
        optional(c_, x.min_local, int32_of);
      } else if (k == "max_local") {
        optional(c_, x.max_local, int32_of);
      } else if (k == "stages") {
        optional(c_, x.stages, int32_of);
      } else if (k == "max_replicas") {
        optional(c_, x.max_replicas, int32_of);
      } else {
        c_.skip();
      }
    });
    if (!have_name) decline();
    for (std::size_t k = 0; k < types_.size(); ++k) {
      if (types_[k] != name) continue;
      TypeModelInfo& t = m.types[k];
      if (p) {
        t.known = true;
        t.params = *p;
      }
      t.min_local = x.min_local;
      t.max_local = x.max_local;
      t.stages = x.stages;
      t.max_replicas = x.max_replicas;
    }
  }

  Cursor& c_;
  std::vector<std::string> types_;
  std::set<std::string> names_;
};

}  // namespace

std::optional<GoodputMatrix> parse_goodput_matrix_fast(std::string_view text) {
  try {
    Cursor c(text);
    if (c.peek() != '{') return std::nullopt;  // TOML, or not a document
    std::string api, kind;
    std::optional<GoodputMatrix> m;
    c.object([&](std::string_view k) {
      if (k == "apiVersion") {
        api = string_of(c);
      } else if (k == "kind") {
        kind = string_of(c);
      } else if (k == "data") {
        if (c.peek() != '{') decline();
        m = MatrixReader(c).data();
      } else {
        c.skip();
      }
    });
    if (!c.at_end() || !m) return std::nullopt;
    const nlohmann::json envelope{{"apiVersion", api}, {"kind", kind}};
    check_envelope(Node(envelope, "", ""), {"GoodputMatrix"});
    return m;
  } catch (const JsonCursor::Decline&) {
    return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
}

GoodputMatrix parse_goodput_matrix_text(std::string_view text, const std::string& file) {
  if (auto m = parse_goodput_matrix_fast(text)) return std::move(*m);
  return parse_goodput_matrix(parse_document(text, file, {"GoodputMatrix"}).data());
}

GoodputMatrix read_goodput_matrix(const std::string& file) {
  return parse_goodput_matrix_text(read_input(file), file);
}

}  // namespace sia
