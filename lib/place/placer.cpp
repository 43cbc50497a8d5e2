#include "place/placer.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/configuration.hpp"

namespace sia {

namespace {

struct NodeState {
  int cluster_index = 0;   // into Cluster::nodes
  std::vector<int> owner;  // per GPU: job index or -1
  bool whole = false;      // held by a whole-node job
  int free() const {
    int n = 0;
    for (int o : owner) n += o < 0;
    return n;
  }
};

struct Work {
  int job = 0;  // index into allocation.jobs
  Config config;
  bool placed = false;
  int evictions = 0;
  std::string note;
  std::vector<std::pair<int, std::vector<int>>> gpus;  // (node slot, GPU indices)
};

// A free block of `g` GPUs aligned inside one virtual node of `owner`, else any `g` free
// GPUs, lowest first. Empty when the node cannot hold `g`.
std::vector<int> pick_gpus(const std::vector<int>& owner, int g, bool* aligned) {
  const int n = static_cast<int>(owner.size());
  int base = 0;
  for (int v : virtual_node_sizes(n)) {
    if (v >= g) {
      for (int start = base; start + g <= base + v; start += g) {
        bool ok = true;
        for (int k = start; k < start + g && ok; ++k) ok = owner[k] < 0;
        if (ok) {
          std::vector<int> out;
          for (int k = start; k < start + g; ++k) out.push_back(k);
          if (aligned) *aligned = true;
          return out;
        }
      }
    }
    base += v;
  }
  std::vector<int> out;
  for (int k = 0; k < n && static_cast<int>(out.size()) < g; ++k) {
    if (owner[k] < 0) out.push_back(k);
  }
  if (static_cast<int>(out.size()) < g) out.clear();
  if (aligned) *aligned = false;
  return out;
}

class TypePlacer {
 public:
  TypePlacer(const Cluster& cluster, int type, std::vector<Work>& work)
      : cluster_(cluster), type_(type), work_(work) {
    for (int idx : cluster.nodes_of_type(type)) {
      NodeState s;
      s.cluster_index = idx;
      s.owner.assign(cluster.nodes[idx].gpus, -1);
      nodes_.push_back(std::move(s));
    }
    gpn_ = cluster.types[type].gpus_per_node;
  }

  // Only jobs that fit on one node may be evicted to make room; a job with whole nodes (or
  // a multi-node remainder) stays.
  bool single_node(int w) const {
    return work_[w].config.nodes == 1 && work_[w].config.gpus < gpn_;
  }
  bool holds_multi_node(int slot) const {
    for (int o : nodes_[slot].owner) {
      if (o >= 0 && !single_node(o)) return true;
    }
    return false;
  }

  void take(int w, int slot, const std::vector<int>& gpus) {
    for (int g : gpus) nodes_[slot].owner[g] = w;
    work_[w].gpus.push_back({slot, gpus});
  }

  void release(int w) {
    for (auto& [slot, gpus] : work_[w].gpus) {
      for (int g : gpus) nodes_[slot].owner[g] = -1;
      nodes_[slot].whole = false;
    }
    work_[w].gpus.clear();
    work_[w].placed = false;
  }

  // Keeps a job on exactly its previous GPUs, if they are all there and free.
  bool preserve(int w, const JobPlacement& prev) {
    std::vector<std::pair<int, std::vector<int>>> want;
    for (const auto& ng : prev.nodes) {
      int slot = slot_of(ng.node);
      if (slot < 0) return false;
      for (int g : ng.gpus) {
        if (g >= static_cast<int>(nodes_[slot].owner.size()) || nodes_[slot].owner[g] >= 0) {
          return false;
        }
      }
      want.push_back({slot, ng.gpus});
    }
    // The shape must still be valid for the configuration: one node for a partial
    // allocation, whole nodes for a distributed one.
    const Config& c = work_[w].config;
    if (c.gpus < gpn_ && want.size() != 1) return false;
    if (c.gpus >= gpn_ && c.gpus % gpn_ == 0) {
      for (auto& [slot, gpus] : want) {
        if (static_cast<int>(gpus.size()) != gpn_) return false;
      }
    }
    for (auto& [slot, gpus] : want) {
      take(w, slot, gpus);
      if (static_cast<int>(gpus.size()) == gpn_ && c.gpus >= gpn_) nodes_[slot].whole = true;
    }
    work_[w].placed = true;
    work_[w].note = "kept its GPUs (same type and GPU count)";
    return true;
  }

  // Whole nodes for the distributed part, from the highest index down; evicts single-node
  // jobs from the emptiest nodes when short. Returns false if it cannot.
  bool place_whole(int w, int count, std::vector<int>& queue) {
    std::vector<int> chosen;
    for (int slot = static_cast<int>(nodes_.size()) - 1; slot >= 0; --slot) {
      if (static_cast<int>(chosen.size()) == count) break;
      if (nodes_[slot].free() == gpn_) chosen.push_back(slot);
    }
    int evicted_here = 0;
    while (static_cast<int>(chosen.size()) < count) {
      int best = -1;
      for (int slot = 0; slot < static_cast<int>(nodes_.size()); ++slot) {
        if (nodes_[slot].whole || holds_multi_node(slot) ||
            std::count(chosen.begin(), chosen.end(), slot)) {
          continue;
        }
        if (best < 0 || nodes_[slot].free() > nodes_[best].free()) best = slot;
      }
      if (best < 0) {
        work_[w].note = "not enough nodes free of whole-node jobs for " + std::to_string(count) +
                        " whole node(s)";
        return false;
      }
      std::set<int> victims(nodes_[best].owner.begin(), nodes_[best].owner.end());
      victims.erase(-1);
      for (int v : victims) {
        release(v);
        ++work_[v].evictions;
        work_[v].note = "evicted to free a whole node";
        evicted_.insert(v);
        queue.push_back(v);
        ++evicted_here;
      }
      chosen.push_back(best);
    }
    for (int slot : chosen) {
      std::vector<int> all(gpn_);
      for (int k = 0; k < gpn_; ++k) all[k] = k;
      take(w, slot, all);
      nodes_[slot].whole = true;
    }
    work_[w].note =
        "whole nodes, taken from the highest index" +
        (evicted_here ? ", after evicting " + std::to_string(evicted_here) + " single-node job(s)"
                      : std::string());
    return true;
  }

  // One node for `g` GPUs, best fit from the low end; evicts on fragmentation.
  bool place_partial(int w, int g, std::vector<int>& queue, bool may_evict) {
    int best = -1;
    bool best_aligned = false;
    for (int slot = 0; slot < static_cast<int>(nodes_.size()); ++slot) {
      if (nodes_[slot].whole) continue;
      int f = nodes_[slot].free();
      if (f < g) continue;
      bool aligned = false;
      if (pick_gpus(nodes_[slot].owner, g, &aligned).empty()) continue;
      if (best < 0 || (aligned && !best_aligned) ||
          (aligned == best_aligned && f < nodes_[best].free())) {
        best = slot;
        best_aligned = aligned;
      }
    }
    if (best < 0 && may_evict) {
      // The node with the most free GPUs, then the fewest evictions to make room.
      // The node with the most room that only single-node jobs share (multi-node jobs
      // are never evicted), then the smallest jobs first until the block fits.
      int target = -1;
      for (int slot = 0; slot < static_cast<int>(nodes_.size()); ++slot) {
        if (nodes_[slot].whole || static_cast<int>(nodes_[slot].owner.size()) < g) continue;
        int room = nodes_[slot].free();
        for (int o : nodes_[slot].owner) room += o >= 0 && single_node(o);
        if (room < g) continue;
        if (target < 0 || nodes_[slot].free() > nodes_[target].free()) target = slot;
      }
      if (target < 0) {
        work_[w].note =
            "no node can hold " + std::to_string(g) + " GPUs even after evicting single-node jobs";
        return false;
      }
      std::map<int, int> sizes;
      for (int o : nodes_[target].owner) {
        if (o >= 0 && single_node(o)) ++sizes[o];
      }
      std::vector<std::pair<int, int>> by_size;
      for (auto [o, n] : sizes) by_size.push_back({n, o});
      std::sort(by_size.begin(), by_size.end());
      int evicted_here = 0;
      for (auto [n, o] : by_size) {
        if (!pick_gpus(nodes_[target].owner, g, nullptr).empty()) break;
        release(o);
        ++work_[o].evictions;
        work_[o].note = "evicted to make room for a larger job";
        evicted_.insert(o);
        queue.push_back(o);
        ++evicted_here;
      }
      if (pick_gpus(nodes_[target].owner, g, nullptr).empty()) {
        work_[w].note = "no block of " + std::to_string(g) + " GPUs on any node";
        return false;
      }
      best = target;
      work_[w].note = "on the node with the most room, after evicting " +
                      std::to_string(evicted_here) + " smaller job(s)";
    } else if (best >= 0) {
      work_[w].note = std::string(work_[w].evictions ? "re-placed after eviction: " : "") +
                      "best fit (the fullest node that holds it" +
                      (best_aligned ? ", in an aligned block)" : ")");
    }
    if (best < 0) {
      if (work_[w].note.empty()) work_[w].note = "no node has " + std::to_string(g) + " free GPUs";
      return false;
    }
    take(w, best, pick_gpus(nodes_[best].owner, g, nullptr));
    return true;
  }

  void run(const std::vector<int>& members, const std::map<std::string, const JobPlacement*>& prev,
           const Allocation& alloc) {
    std::vector<int> rest;
    for (int w : members) {
      auto it = prev.find(alloc.jobs[work_[w].job].job);
      if (it != prev.end() && it->second->type == type_ &&
          it->second->gpu_count() == work_[w].config.gpus && preserve(w, *it->second)) {
        continue;
      }
      rest.push_back(w);
    }
    auto by_size = [&](int a, int b) {
      if (work_[a].config.gpus != work_[b].config.gpus) {
        return work_[a].config.gpus > work_[b].config.gpus;
      }
      return alloc.jobs[work_[a].job].job < alloc.jobs[work_[b].job].job;
    };
    std::sort(rest.begin(), rest.end(), by_size);
    std::vector<int> queue;
    std::vector<int> partial;
    for (int w : rest) {
      const int full = work_[w].config.gpus / gpn_;
      const int rem = work_[w].config.gpus - full * gpn_;
      if (full == 0) {
        partial.push_back(w);
        continue;
      }
      if (!place_whole(w, full, queue)) {
        release(w);
        continue;
      }
      std::string whole_note = work_[w].note;
      if (rem > 0 && !place_partial(w, rem, queue, false)) {
        release(w);
        work_[w].note = "no node has room for its " + std::to_string(rem) + " remaining GPUs";
        continue;
      }
      if (rem > 0) work_[w].note = whole_note + "; the remaining GPUs " + work_[w].note;
      work_[w].placed = true;
    }
    partial.insert(partial.end(), queue.begin(), queue.end());
    std::stable_sort(partial.begin(), partial.end(), by_size);
    std::vector<int> pending(partial.begin(), partial.end());
    for (std::size_t k = 0; k < pending.size(); ++k) {
      int w = pending[k];
      if (work_[w].placed) continue;
      std::vector<int> more;
      const bool may_evict = work_[w].evictions < 2;
      if (place_partial(w, work_[w].config.gpus, more, may_evict)) work_[w].placed = true;
      for (int v : more) pending.push_back(v);
    }
  }

  const std::set<int>& evicted() const { return evicted_; }
  const NodeState& node(int slot) const { return nodes_[slot]; }

 private:
  int slot_of(const std::string& name) const {
    for (std::size_t s = 0; s < nodes_.size(); ++s) {
      if (cluster_.nodes[nodes_[s].cluster_index].name == name) return static_cast<int>(s);
    }
    return -1;
  }

  const Cluster& cluster_;
  int type_;
  int gpn_ = 1;
  std::vector<Work>& work_;
  std::vector<NodeState> nodes_;
  std::set<int> evicted_;
};

JobPlacement to_job_placement(const JobAllocation& a, const Work& w, const Cluster& cluster,
                              const std::vector<int>& node_index) {
  JobPlacement jp;
  jp.job = a.job;
  jp.type = w.config.type;
  jp.batch = a.batch;
  std::map<std::string, std::vector<int>> by_node;
  for (const auto& [slot, gpus] : w.gpus) {
    auto& v = by_node[cluster.nodes[node_index[slot]].name];
    v.insert(v.end(), gpus.begin(), gpus.end());
  }
  for (auto& [name, gpus] : by_node) {
    std::sort(gpus.begin(), gpus.end());
    jp.nodes.push_back({name, gpus});
  }
  return jp;
}

}  // namespace

void mark_restarts(Placement& placement, const std::optional<Placement>& previous) {
  for (auto& jp : placement.jobs) {
    const JobPlacement* before = previous ? previous->find(jp.job) : nullptr;
    bool same = before && before->type == jp.type && before->nodes.size() == jp.nodes.size();
    if (same) {
      for (std::size_t k = 0; k < jp.nodes.size() && same; ++k) {
        same =
            before->nodes[k].node == jp.nodes[k].node && before->nodes[k].gpus == jp.nodes[k].gpus;
      }
    }
    jp.restart = !same;
  }
}

Placement place(const Allocation& alloc, const Cluster& cluster,
                const std::optional<Placement>& previous) {
  std::vector<Work> work;
  std::vector<std::vector<int>> by_type(cluster.types.size());
  for (std::size_t j = 0; j < alloc.jobs.size(); ++j) {
    const auto& a = alloc.jobs[j];
    if (!a.config) continue;
    int t = cluster.type_index(alloc.cluster.types[a.config->type].name);
    if (t < 0) continue;
    Work w;
    w.job = static_cast<int>(j);
    w.config = Config{t, a.config->nodes, a.config->gpus};
    by_type[t].push_back(static_cast<int>(work.size()));
    work.push_back(std::move(w));
  }
  std::map<std::string, const JobPlacement*> prev;
  if (previous) {
    for (const auto& jp : previous->jobs) prev[jp.job] = &jp;
  }
  Placement out;
  out.cluster_name = cluster.name;
  std::set<std::string> evicted;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    TypePlacer tp(cluster, static_cast<int>(t), work);
    tp.run(by_type[t], prev, alloc);
    std::vector<int> node_index = cluster.nodes_of_type(static_cast<int>(t));
    for (int w : by_type[t]) {
      const auto& a = alloc.jobs[work[w].job];
      if (work[w].placed) {
        out.jobs.push_back(to_job_placement(a, work[w], cluster, node_index));
      } else {
        out.waiting.push_back(a.job);
      }
      out.notes[a.job] = work[w].note;
    }
    for (int w : tp.evicted()) evicted.insert(alloc.jobs[work[w].job].job);
  }
  out.evicted.assign(evicted.begin(), evicted.end());
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  std::sort(out.waiting.begin(), out.waiting.end());
  mark_restarts(out, previous);
  return out;
}

PlacerQuirks placer_quirks(Compat compat) {
  PlacerQuirks q;
  q.round_robin = compat == Compat::reference;
  return q;
}

Placement place(const Allocation& alloc, const Cluster& cluster,
                const std::optional<Placement>& previous, const PlacerQuirks& quirks,
                const std::vector<std::string>* order) {
  return quirks.round_robin ? reference_placement(alloc, cluster, previous, order)
                            : place(alloc, cluster, previous);
}

Placement reference_placement(const Allocation& alloc, const Cluster& cluster,
                              const std::optional<Placement>& previous,
                              const std::vector<std::string>* order) {
  Placement out;
  out.cluster_name = cluster.name;
  // Jobs in the caller's order (the workload's, for the artifact), else by name.
  std::vector<int> jobs;
  if (order) {
    std::map<std::string, int> index;
    for (std::size_t j = 0; j < alloc.jobs.size(); ++j)
      index[alloc.jobs[j].job] = static_cast<int>(j);
    for (const auto& name : *order) {
      if (auto it = index.find(name); it != index.end()) jobs.push_back(it->second);
    }
  } else {
    for (std::size_t j = 0; j < alloc.jobs.size(); ++j) jobs.push_back(static_cast<int>(j));
  }
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    std::vector<int> node_index = cluster.nodes_of_type(static_cast<int>(t));
    const int nn = static_cast<int>(node_index.size());
    const int gpn = cluster.types[t].gpus_per_node;
    std::vector<int> remaining(nn, gpn);
    std::vector<int> mine;
    for (int j : jobs) {
      const auto& a = alloc.jobs[j];
      if (a.config &&
          cluster.type_index(alloc.cluster.types[a.config->type].name) == static_cast<int>(t)) {
        mine.push_back(j);
      }
    }
    std::stable_sort(mine.begin(), mine.end(), [&](int a, int b) {
      return alloc.jobs[a].config->gpus > alloc.jobs[b].config->gpus;
    });
    int ptr = 0;
    for (int j : mine) {
      const auto& a = alloc.jobs[j];
      int need = a.config->gpus;
      std::vector<std::pair<int, int>> taken;  // (node slot, GPUs) in visit order
      int full = need / gpn;
      for (int i = 0; i < nn && full > 0; ++i) {
        if (remaining[ptr] == gpn) {
          remaining[ptr] = 0;
          taken.push_back({ptr, gpn});
          need -= gpn;
          --full;
        }
        ptr = (ptr + 1) % nn;
      }
      for (int i = 0; i < nn && need > 0; ++i) {
        int take = std::min(need, remaining[ptr]);
        if (take > 0) {
          remaining[ptr] -= take;
          taken.push_back({ptr, take});
          need -= take;
        }
        ptr = (ptr + 1) % nn;
      }
      if (need > 0) {
        out.waiting.push_back(a.job);
        out.notes[a.job] = "reference placer: not enough free GPUs";
        for (auto [slot, n] : taken) remaining[slot] += n;
        continue;
      }
      JobPlacement jp;
      jp.job = a.job;
      jp.type = static_cast<int>(t);
      jp.batch = a.batch;
      out.notes[a.job] = "reference placer: whole nodes, then free GPUs round-robin";
      // GPU indices: the lowest free ones on each node; nodes in the order visited.
      for (auto [slot, n] : taken) {
        int first = gpn - remaining[slot] - n;
        NodeGpus ng;
        ng.node = cluster.nodes[node_index[slot]].name;
        for (int g = 0; g < n; ++g) ng.gpus.push_back(first + g);
        jp.nodes.push_back(std::move(ng));
      }
      out.jobs.push_back(std::move(jp));
    }
  }
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  std::sort(out.waiting.begin(), out.waiting.end());
  mark_restarts(out, previous);
  return out;
}

}  // namespace sia
