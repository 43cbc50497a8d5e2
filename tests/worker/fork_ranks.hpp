// Test helper: runs a function in N forked processes (one per rank) and collects their exit
// statuses, so collective operations are tested across real processes and sockets.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <vector>

#include "core/error.hpp"

namespace sia::test {

// A TCP port that was free a moment ago.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// fn(rank) returns the child's exit status; a sia::Error exits with its status, anything
// else with 70. Returns the statuses by rank (128 + N for a signal).
inline std::vector<int> fork_ranks(int n, const std::function<int(int)>& fn) {
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int status = 70;
      try {
        status = fn(r);
      } catch (const Error& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
        status = to_int(e.status());
      } catch (...) {
      }
      std::fflush(nullptr);
      ::_exit(status);
    }
    pids.push_back(pid);
  }
  std::vector<int> out;
  for (pid_t pid : pids) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    out.push_back(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  }
  return out;
}

}  // namespace sia::test
