#include "exec/node_plan.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sia::exec {

std::vector<JobLaunch> plan_node(const Placement& placement, const Cluster& cluster,
                                 const std::vector<JobState>& jobs, const std::string& node,
                                 const std::string& placement_file) {
  std::map<std::string, const JobState*> by_name;
  for (const auto& j : jobs) by_name[j.spec.name] = &j;
  std::map<std::string, std::string> address;
  for (const auto& n : cluster.nodes) address[n.name] = n.address.empty() ? n.name : n.address;

  std::vector<JobLaunch> out;
  for (const auto& jp : placement.jobs) {
    std::set<std::string> seen;
    bool here = false;
    for (const auto& ng : jp.nodes) {
      if (!seen.insert(ng.node).second) {
        throw Error(ExitStatus::data, placement_file + ": job \"" + jp.job + "\": node \"" +
                                          ng.node + "\" is listed twice");
      }
      here = here || ng.node == node;
    }
    if (!here) continue;
    auto spec = by_name.find(jp.job);
    if (spec == by_name.end()) {
      throw Error(ExitStatus::data,
                  placement_file + ": job \"" + jp.job + "\" is placed on node \"" + node +
                      "\" but " +
                      (jobs.empty() ? "no --jobs file was given" : "no --jobs file describes it"));
    }
    if (!valid_job_name(jp.job)) {
      throw Error(ExitStatus::data,
                  placement_file + ": job \"" + jp.job + "\": not usable as a job name on a node");
    }
    const JobState& js = *spec->second;
    if (js.spec.command.empty()) {
      throw Error(ExitStatus::data, js.where("command") + ": job \"" + jp.job +
                                        "\" has no command to run (give its JobSpec a command)");
    }
    JobLaunch l;
    l.job = jp.job;
    l.node = node;
    l.gpu_type = cluster.types.at(static_cast<std::size_t>(jp.type)).name;
    l.nodes = jp.nodes;
    l.command = js.spec.command;
    l.cwd = js.spec.workdir;  // where it was submitted from; see prepare_generation
    l.batch = jp.batch;
    l.expected_step = js.step;
    l.stop_fraction = js.stop_fraction;
    l.attempt = js.attempt;
    l.ckpt_dir = js.checkpoint_dir;  // the controller's choice; see prepare_generation
    l.run_as = js.run_as;
    bool alone = jp.nodes.size() == 1;
    const std::string& first = jp.nodes.front().node;
    l.master_addr = alone ? "127.0.0.1" : (address.count(first) ? address[first] : first);
    int offset = 0;
    for (const auto& ng : jp.nodes) {
      if (ng.node == node) {
        for (std::size_t i = 0; i < ng.gpus.size(); ++i) {
          RankLaunch r;
          r.rank = offset + static_cast<int>(i);
          r.local_rank = static_cast<int>(i);
          r.gpus = {ng.gpus[i]};
          l.ranks.push_back(std::move(r));
        }
      }
      offset += static_cast<int>(ng.gpus.size());
    }
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  return out;
}

Cluster cluster_from_placement(const Node& data) {
  Cluster c;
  c.name = data.string_or("cluster_name", "placement");
  std::map<std::string, std::size_t> node_index;
  auto jobs = data.get("jobs");
  if (!jobs || !jobs->is_array()) return c;
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    Node j = (*jobs)[i];
    if (!j.is_object()) continue;
    auto type = j.get("gpu_type");
    if (!type || !type->is_string()) continue;
    std::string tname = type->as_string();
    if (c.type_index(tname) < 0) c.types.push_back(GpuType{tname, "", 0, 0, 0});
    int t = c.type_index(tname);
    auto nodes = j.get("nodes");
    if (!nodes || !nodes->is_array()) continue;
    for (std::size_t k = 0; k < nodes->size(); ++k) {
      Node n = (*nodes)[k];
      if (!n.is_object()) continue;
      auto name = n.get("name");
      if (!name || !name->is_string()) continue;
      std::string nn = name->as_string();
      if (!node_index.count(nn)) {
        node_index[nn] = c.nodes.size();
        ClusterNode cn;
        cn.name = cn.address = nn;
        cn.type = t;
        c.nodes.push_back(cn);
      }
      ClusterNode& cn = c.nodes[node_index[nn]];
      if (auto gpus = n.get("gpus"); gpus && gpus->is_array()) {
        for (std::size_t g = 0; g < gpus->size(); ++g) {
          const auto& v = (*gpus)[g].json();
          if (v.is_number_integer() && v.get<std::int64_t>() >= 0 &&
              v.get<std::int64_t>() < (1 << 20)) {
            cn.gpus = std::max(cn.gpus, static_cast<int>(v.get<std::int64_t>()) + 1);
          }
        }
      }
    }
  }
  return c;
}

int derive_port(const std::string& job, int generation, int lo, int hi) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : job + "/" + std::to_string(generation)) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  auto span = static_cast<std::uint64_t>(hi - lo + 1);
  return lo + static_cast<int>(h % span);
}

bool tcp_port_free(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // cannot tell; let the worker find out
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

bool host_resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (res) ::freeaddrinfo(res);
  return rc == 0;
}

void prepare_generation(JobLaunch& l, int generation, const StateDir& state,
                        const GenerationSettings& s) {
  l.generation = generation;
  if (l.cwd.empty()) l.cwd = s.cwd;  // no workdir recorded: sia-run's own directory
  // This node's --ckpt-root wins (shared storage mounted elsewhere), then the job's own
  // directory from its Jobs state, then the state directory.
  if (!s.ckpt_root.empty() || l.ckpt_dir.empty()) l.ckpt_dir = state.ckpt_dir(l.job, s.ckpt_root);
  l.report = state.report_path(l.job);
  l.batch_plan = state.batch_plan_path(l.job);
  l.plan = 0;
  l.report_interval = s.report_interval;
  l.grace = s.grace;
  l.restore = s.file_exists && s.file_exists(l.ckpt_dir + "/latest");
  l.restore_missing = !l.restore && l.expected_step > 0;
  int port = derive_port(s.port_scope.empty() ? l.job : s.port_scope + ":" + l.job, generation,
                         s.port_lo, s.port_hi);
  if (l.nodes.size() == 1 && s.port_free) {  // no other node to agree with: probe
    // From a start that also depends on the state directory, so that two sia-run state
    // directories on one machine launching a same-named job do not race for one port.
    port = derive_port(state.root() + ":" + l.job, generation, s.port_lo, s.port_hi);
    int span = s.port_hi - s.port_lo + 1;
    for (int k = 0; k < span; ++k) {
      int p = s.port_lo + (port - s.port_lo + k) % span;
      if (s.port_free(p)) {
        port = p;
        break;
      }
    }
  }
  l.master_port = port;
  const int world = l.world_size();
  const int local_world = static_cast<int>(l.ranks.size());
  for (auto& r : l.ranks) {
    r.log = state.rank_log(l.job, r.rank);
    r.env = {
        {"RANK", std::to_string(r.rank)},
        {"LOCAL_RANK", std::to_string(r.local_rank)},
        {"WORLD_SIZE", std::to_string(world)},
        {"LOCAL_WORLD_SIZE", std::to_string(local_world)},
        {"MASTER_ADDR", l.master_addr},
        {"MASTER_PORT", std::to_string(l.master_port)},
        {"SIA_JOB", l.job},
        {"SIA_ROUND", std::to_string(generation)},
        {"SIA_GPU_TYPE", l.gpu_type},
        {"SIA_ACCUM_STEPS", std::to_string(l.batch.accum_steps)},
        {"SIA_CKPT_DIR", l.ckpt_dir},
        {"SIA_RESTORE", l.restore ? "1" : "0"},
        {"SIA_REPORT", l.report},
        {"SIA_BATCH_PLAN", l.batch_plan},
        {"SIA_REPORT_INTERVAL", number_text(l.report_interval)},
        {"CUDA_VISIBLE_DEVICES", join_ints(r.gpus)},
    };
    // A placement without batch settings leaves them to the worker (0 is not a batch).
    if (l.batch.global > 0) r.env["SIA_BATCH_SIZE"] = std::to_string(l.batch.global);
    if (l.batch.local > 0) r.env["SIA_LOCAL_BSZ"] = std::to_string(l.batch.local);
    if (l.stop_fraction > 0) r.env["SIA_STOP_FRACTION"] = number_text(l.stop_fraction);
  }
}

std::string rank_header(const JobLaunch& l, const RankLaunch& r) {
  char when[32] = "";
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (::gmtime_r(&now, &tm)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "==== sia-run: " + std::string(when) + " job " + l.job + " round " +
         std::to_string(l.generation) + " rank " + std::to_string(r.rank) + "/" +
         std::to_string(l.world_size()) + " on " + l.node + " GPU " + join_ints(r.gpus) + " (" +
         l.gpu_type + ")" + (l.restore ? " restoring" : "") + " ====";
}

}  // namespace sia::exec
