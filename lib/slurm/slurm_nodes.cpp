#include "slurm/slurm_nodes.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace sia::slurm {

namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty() || s == "(null)") return out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      if (i > start) out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

long sum(const std::vector<GpuGres>& gpus) {
  long n = 0;
  for (const auto& g : gpus) n += g.count;
  return n;
}

SlurmNode parse_node(std::string_view line, std::size_t line_no) {
  Fields f = split_fields(line);
  const std::string where = "slurm: scontrol show node: line " + std::to_string(line_no);
  SlurmNode n;
  n.name = f.get("NodeName");
  if (n.name.empty()) throw Error(ExitStatus::data, where + ": expected NodeName=NAME");
  n.address = f.get("NodeAddr");
  if (n.address.empty()) n.address = n.name;
  std::string state = f.get("State");
  if (state.empty()) throw Error(ExitStatus::data, where + " (" + n.name + "): expected State=");
  std::vector<std::string> words = split(state, '+');
  n.state = words.empty() ? state : words.front();
  // sinfo's suffixes: "*" not responding, "~" powered down, "#" powering up, "%" down, "$"
  // maintenance, "@" reboot, "!" powering down.
  while (!n.state.empty() &&
         std::string_view("*~#%$@!^-").find(n.state.back()) != std::string_view::npos) {
    n.flags.push_back(n.state.back() == '*' ? "NOT_RESPONDING" : "SUFFIX");
    n.state.pop_back();
  }
  if (words.size() > 1) n.flags.insert(n.flags.end(), words.begin() + 1, words.end());
  n.partitions = split(f.get("Partitions"), ',');
  n.gpus = parse_gpu_gres(f.get("Gres"), where + " (" + n.name + "): Gres");
  n.gpus_used = parse_gpu_gres(f.get("GresUsed"), where + " (" + n.name + "): GresUsed");
  return n;
}

}  // namespace

bool SlurmNode::has_flag(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

bool SlurmNode::usable() const {
  static const char* const kUp[] = {"IDLE", "MIXED", "ALLOCATED", "COMPLETING"};
  static const char* const kBad[] = {
      "DRAIN",          "DRAINING",         "DRAINED",       "FAIL",          "FAILING",
      "NOT_RESPONDING", "MAINTENANCE",      "POWERED_DOWN",  "POWERING_DOWN", "POWER_DOWN",
      "POWERING_UP",    "REBOOT_REQUESTED", "REBOOT_ISSUED", "INVALID_REG",   "INVALID",
      "SUFFIX",         "FUTURE",           "DOWN"};
  if (std::none_of(std::begin(kUp), std::end(kUp), [&](const char* s) { return state == s; })) {
    return false;
  }
  return std::none_of(std::begin(kBad), std::end(kBad), [&](const char* s) { return has_flag(s); });
}

bool SlurmNode::in_partition(const std::string& partition) const {
  return partition.empty() ||
         std::find(partitions.begin(), partitions.end(), partition) != partitions.end();
}

long SlurmNode::gpu_total() const {
  return sum(gpus);
}

long SlurmNode::gpu_used() const {
  return sum(gpus_used);
}

std::vector<std::string> show_nodes_args() {
  return {"-d", "-o", "show", "node"};
}

std::vector<SlurmNode> parse_nodes(std::string_view text) {
  std::vector<SlurmNode> nodes;
  for_each_record(text, [&](std::string_view line, std::size_t line_no) {
    nodes.push_back(parse_node(line, line_no));
  });
  std::sort(nodes.begin(), nodes.end(),
            [](const SlurmNode& a, const SlurmNode& b) { return a.name < b.name; });
  return nodes;
}

}  // namespace sia::slurm
