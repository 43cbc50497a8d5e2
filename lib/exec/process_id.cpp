#include "exec/process_id.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace sia::exec {

namespace {

std::string boot_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string s;
    std::getline(in, s);
    return s;
  }();
  return id;
}

// Fields 3.. of /proc/PID/stat (after the command name, which may hold spaces and
// parentheses); empty when the process does not exist.
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> out;
  for (std::string f; rest >> f;) out.push_back(f);
  return out;
}

}  // namespace

ProcessId identify(pid_t pid) {
  ProcessId id;
  if (pid <= 0) return id;
  auto f = stat_fields(pid);
  if (f.size() < 20) return id;  // field 22 is f[19]
  id.pid = pid;
  id.start = std::stoull(f[19]);
  id.boot = boot_id();
  return id;
}

ProcessId identify_self() {
  return identify(::getpid());
}

bool is_alive(const ProcessId& id) {
  if (id.pid <= 0 || id.boot != boot_id()) return false;
  auto f = stat_fields(id.pid);
  if (f.size() < 20 || f[0] == "Z" || f[0] == "X") return false;
  return std::stoull(f[19]) == id.start;
}

}  // namespace sia::exec
