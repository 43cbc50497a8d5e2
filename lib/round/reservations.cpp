#include "round/reservations.hpp"

#include <algorithm>
#include <cmath>

#include "core/document.hpp"
#include "core/error.hpp"

namespace sia {

namespace {

constexpr double kDay = 86400;

// "HH:MM" -> seconds after midnight, or -1.
int clock_seconds(const std::string& s) {
  if (s.size() != 5 || s[2] != ':') return -1;
  for (int k : {0, 1, 3, 4}) {
    if (s[k] < '0' || s[k] > '9') return -1;
  }
  const int h = (s[0] - '0') * 10 + (s[1] - '0');
  const int m = (s[3] - '0') * 10 + (s[4] - '0');
  if (h > 23 || m > 59) return -1;
  return h * 3600 + m * 60;
}

bool in_window(int start, int end, double t) {
  double s = std::fmod(t, kDay);
  if (s < 0) s += kDay;
  return start < end ? (s >= start && s < end) : (s >= start || s < end);
}

int nodes_for(int gpus, int per_node) {
  return per_node > 0 ? (gpus + per_node - 1) / per_node : 0;
}

}  // namespace

int held_gpus(const Reservation& r, double t) {
  if (!r.daily_start && r.steps.empty()) return r.gpus;
  int held = 0;
  if (r.daily_start && in_window(*r.daily_start, *r.daily_end, t)) held = r.gpus;
  int stepped = 0;  // the last step's at or before t
  for (const auto& s : r.steps) {
    if (s.at > t) break;
    stepped = s.gpus;
  }
  return std::max(held, stepped);
}

int ReservedNodes::lent_gpus(const Cluster& cluster) const {
  int lent = 0;
  for (std::size_t t = 0; t < owned.size(); ++t) {
    lent += (owned[t] - held[t]) * cluster.types[t].gpus_per_node;
  }
  return lent;
}

ReservedNodes reserved_nodes(const std::vector<Reservation>& reservations, const Cluster& cluster,
                             double t) {
  const std::size_t n = cluster.types.size();
  std::vector<int> owned_gpus(n, 0), held_gpus_of(n, 0);
  for (const auto& r : reservations) {
    const int type = cluster.type_index(r.gpu_type);
    if (type < 0) continue;  // checked when read
    owned_gpus[type] += r.gpus;
    held_gpus_of[type] += held_gpus(r, t);
  }
  ReservedNodes out;
  for (std::size_t k = 0; k < n; ++k) {
    const GpuType& g = cluster.types[k];
    out.owned.push_back(std::min(g.node_count, nodes_for(owned_gpus[k], g.gpus_per_node)));
    out.held.push_back(std::min(out.owned.back(), nodes_for(held_gpus_of[k], g.gpus_per_node)));
  }
  return out;
}

std::vector<int> most_held_nodes(const std::vector<Reservation>& reservations,
                                 const Cluster& cluster, double from, double to) {
  // The instants the holding may grow at: `from`, each step within the span, and each
  // window's starts within a day after either (the pattern repeats daily between steps).
  std::vector<double> segments{from};
  for (const auto& r : reservations) {
    for (const auto& s : r.steps) {
      if (s.at > from && s.at <= to) segments.push_back(s.at);
    }
  }
  std::vector<double> instants = segments;
  for (double begin : segments) {
    for (const auto& r : reservations) {
      if (!r.daily_start) continue;
      double day = std::floor(begin / kDay) * kDay;
      for (int k = 0; k < 2; ++k, day += kDay) {
        const double start = day + *r.daily_start;
        if (start > begin && start <= to && start <= begin + kDay) instants.push_back(start);
      }
    }
  }
  std::vector<int> most(cluster.types.size(), 0);
  for (double t : instants) {
    const ReservedNodes at = reserved_nodes(reservations, cluster, t);
    for (std::size_t k = 0; k < most.size(); ++k) most[k] = std::max(most[k], at.held[k]);
  }
  return most;
}

std::map<std::string, int> gpus_unreserved(const std::vector<Reservation>& reservations,
                                           const Cluster& cluster, double from, double to) {
  const std::vector<int> held = most_held_nodes(reservations, cluster, from, to);
  std::map<std::string, int> out;
  for (std::size_t k = 0; k < cluster.types.size(); ++k) {
    const GpuType& g = cluster.types[k];
    out[g.name] += g.capacity() - held[k] * g.gpus_per_node;
  }
  return out;
}

std::vector<Reservation> parse_reservations(const Node& data, const Cluster& cluster) {
  data.only_keys({"reservation", "apiVersion", "kind"});
  std::vector<Reservation> out;
  std::vector<int> owned(cluster.types.size(), 0);
  const auto list = data.get("reservation");
  if (!list) return out;
  list->each([&](const Node& e) {
    e.only_keys({"gpu_type", "gpus", "daily", "steps"});
    Reservation r;
    const Node type = e.at("gpu_type");
    r.gpu_type = type.as_string();
    const int t = cluster.type_index(r.gpu_type);
    if (t < 0)
      type.expected("a GPU type of cluster " + cluster.name + " (" + cluster.type_names() + ")");
    const Node gpus = e.at("gpus");
    r.gpus = gpus.positive_int32();
    owned[t] += r.gpus;
    if (owned[t] > cluster.types[t].capacity()) {
      gpus.fail("the reservations of " + r.gpu_type + " own " + std::to_string(owned[t]) +
                " GPUs, more than its " + std::to_string(cluster.types[t].capacity()));
    }
    if (const auto daily = e.get("daily")) {
      const std::string w = daily->as_string();
      const auto dash = w.find('-');
      const int a = dash == std::string::npos ? -1 : clock_seconds(w.substr(0, dash));
      const int b = dash == std::string::npos ? -1 : clock_seconds(w.substr(dash + 1));
      if (a < 0 || b < 0 || a == b)
        daily->expected("a UTC window \"HH:MM-HH:MM\" of two different times");
      r.daily_start = a;
      r.daily_end = b;
    }
    if (const auto steps = e.get("steps")) {
      steps->each([&](const Node& s) {
        s.only_keys({"at", "gpus"});
        ReservationStep step;
        const Node at = s.at("at");
        step.at = at.non_negative_number();
        if (!r.steps.empty() && step.at <= r.steps.back().at) {
          at.expected("a time after the previous step's (steps in ascending order)");
        }
        const Node g = s.at("gpus");
        step.gpus = static_cast<int>(g.int_in(0, r.gpus));
        r.steps.push_back(step);
      });
    }
    out.push_back(std::move(r));
  });
  return out;
}

std::vector<Reservation> read_reservations(const std::string& file, const Cluster& cluster) {
  const Document doc = read_document(file, {"Reservations"}, ExitStatus::config);
  return parse_reservations(doc.data(), cluster);
}

}  // namespace sia
