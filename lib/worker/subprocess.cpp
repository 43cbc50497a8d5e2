#include "worker/subprocess.hpp"

#include <signal.h>

#include <cstring>
#include <fstream>
#include <iostream>

#include "core/error.hpp"
#include "os/run_process.hpp"

namespace sia::worker {

ExitInfo run_subprocess(const Subprocess& p) {
  if (p.argv.empty()) throw Error(ExitStatus::usage, "no command to run");
  os::SpawnOptions o;
  o.argv = p.argv;
  o.env = p.env;
  if (!p.log_path.empty()) o.out = o.err = os::Stream::append_to(p.log_path);
  o.group = os::Group::own;
  o.parent_death_signal = SIGKILL;
  o.default_signals = {SIGPIPE};
  os::RunResult r = os::run_process(o, "", p.timeout, 10);
  ExitInfo info;
  info.timed_out = r.timed_out;
  info.seconds = r.seconds;
  info.status = r.exit.status();
  if (r.exec_errno != 0) {
    info.status = 127;
    std::string msg = "exec " + p.argv[0] + ": " + std::strerror(r.exec_errno) + "\n";
    if (p.log_path.empty()) {
      std::cerr << msg;
    } else {
      std::ofstream(p.log_path, std::ios::app) << msg;
    }
  }
  return info;
}

std::string tail_of_file(const std::string& path, int lines) {
  // Only the last 64 KiB: a worker's log may be gigabytes long.
  constexpr std::streamoff kMaxTail = 64 << 10;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : 0;
  if (size > kMaxTail) {
    in.seekg(size - kMaxTail);
    std::string partial;
    std::getline(in, partial);  // a line cut by the seek
  } else {
    in.seekg(0);
  }
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > static_cast<std::size_t>(lines) ? all.size() - lines : 0;
       i < all.size(); ++i) {
    out += all[i] + "\n";
  }
  return out;
}

}  // namespace sia::worker
