#include "worker/tcp_comm.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "os/clock.hpp"
#include "worker/exit_codes.hpp"

namespace sia::worker {

namespace {

constexpr std::uint32_t kHelloMagic = 0x53494148;  // "SIAH"
constexpr std::uint32_t kOpMagic = 0x5349414f;     // "SIAO"
constexpr std::uint32_t kVersion = 1;
enum Op : std::uint32_t { kSumF64 = 1, kSumF32 = 2, kBroadcast = 3 };

// All integers travel in the host's byte order: the ranks of a job run the same binary.
struct Hello {
  std::uint32_t magic, version;
  std::int32_t rank, world;
  std::int64_t round;
  std::uint32_t job_len;
};
struct Reply {
  std::uint32_t magic, status, msg_len;
};
struct Header {
  std::uint32_t magic, op;
  std::uint64_t count;
};

[[noreturn]] void lost(const std::string& what) {
  throw Error(kPeerLost, what);
}

std::string errno_text() {
  return std::strerror(errno);
}

// Waits until fd is ready for `events`; false after `timeout` seconds.
bool wait_fd(int fd, short events, double timeout) {
  const double deadline = os::now_seconds() + timeout;
  for (;;) {
    double left = deadline - os::now_seconds();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) lost(std::string("poll: ") + errno_text());
  }
}

void send_all(int fd, const void* data, std::size_t n, double timeout, const std::string& who) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
    } else if (k < 0 && errno == EINTR) {
      continue;
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_fd(fd, POLLOUT, timeout)) {
        lost(who + ": no progress sending for " + std::to_string(timeout) + " s");
      }
    } else {
      lost(who + ": connection lost (" + errno_text() + ")");
    }
  }
}

void recv_all(int fd, void* data, std::size_t n, double timeout, const std::string& who) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = ::recv(fd, p, n, 0);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
    } else if (k == 0) {
      lost(who + ": connection closed (the peer exited)");
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_fd(fd, POLLIN, timeout)) {
        lost(who + ": no answer for " + std::to_string(timeout) + " s");
      }
    } else {
      lost(who + ": connection lost (" + errno_text() + ")");
    }
  }
}

void tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// A listening socket on every interface (IPv6 dual-stack, else IPv4); -1 with errno set.
int try_listen(int port) {
  for (int family : {AF_INET6, AF_INET}) {
    int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int one = 1, zero = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (family == AF_INET6) {
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<std::uint16_t>(port));
      rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc == 0 && ::listen(fd, 128) == 0) return fd;
    int err = errno;
    ::close(fd);
    errno = err;
    if (err == EADDRINUSE) return -1;  // the family works; the port is taken
  }
  return -1;
}

// Connects to host:port within `timeout` seconds; -1 (with a reason) if it cannot.
int try_connect(const std::string& host, int port, double timeout, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (gai != 0) {
    why = "cannot resolve " + host + ": " + ::gai_strerror(gai);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && wait_fd(fd, POLLOUT, timeout)) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      why = errno_text();
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  return fd;
}

void send_reply(int fd, std::uint32_t status, const std::string& msg) {
  Reply r{kHelloMagic, status, static_cast<std::uint32_t>(msg.size())};
  try {
    send_all(fd, &r, sizeof r, 5, "reply");
    send_all(fd, msg.data(), msg.size(), 5, "reply");
  } catch (const Error&) {
    // The peer hung up; nothing to tell it.
  }
}

std::string who(int rank) {
  return "rank " + std::to_string(rank);
}

}  // namespace

std::unique_ptr<TcpComm> TcpComm::connect(const TcpCommConfig& config) {
  std::unique_ptr<TcpComm> c(new TcpComm(config));
  if (config.world_size <= 1) return c;
  if (config.rank == 0) {
    c->rendezvous_root();
  } else {
    c->rendezvous_peer();
  }
  return c;
}

TcpComm::~TcpComm() {
  for (int fd : peers_) {
    if (fd >= 0) ::close(fd);
  }
}

void TcpComm::rendezvous_root() {
  const TcpCommConfig& c = config_;
  const double deadline = os::now_seconds() + c.rendezvous_timeout;
  const std::string where = "rendezvous on port " + std::to_string(c.master_port);
  auto check_stop = [&] {
    if (c.stop && c.stop()) throw Error(kPreempted, "SIGTERM during the rendezvous");
  };
  int lfd = -1;
  while ((lfd = try_listen(c.master_port)) < 0) {
    check_stop();
    if (errno != EADDRINUSE || os::now_seconds() > deadline) {
      lost(where + ": cannot listen: " + errno_text());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  peers_.assign(static_cast<std::size_t>(c.world_size), -1);
  int missing = c.world_size - 1;
  std::string last_rejection;
  try {
    while (missing > 0) {
      check_stop();
      if (os::now_seconds() > deadline) {
        std::string which;
        for (int r = 1; r < c.world_size; ++r) {
          if (peers_[static_cast<std::size_t>(r)] < 0) which += " " + std::to_string(r);
        }
        lost(where + ": " + std::to_string(missing) + " rank(s) did not join within " +
             std::to_string(static_cast<int>(c.rendezvous_timeout)) + " s (missing:" + which + ")" +
             (last_rejection.empty() ? "" : "; turned away: " + last_rejection));
      }
      if (!wait_fd(lfd, POLLIN, 0.1)) continue;
      int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      tune(fd);
      Hello h{};
      std::string job;
      std::string reason;
      try {
        recv_all(fd, &h, sizeof h, 5, "hello");
        if (h.magic != kHelloMagic || h.version != kVersion || h.job_len > 4096) {
          reason = "not a sia worker of this version";
        } else {
          job.resize(h.job_len);
          recv_all(fd, job.data(), job.size(), 5, "hello");
        }
      } catch (const Error& e) {
        reason = e.what();
      }
      if (reason.empty()) {
        if (job != c.job) {
          reason = "job '" + job + "' is not '" + c.job + "'";
        } else if (h.round != c.round) {
          reason = "round " + std::to_string(h.round) + " is not " + std::to_string(c.round);
        } else if (h.world != c.world_size) {
          reason =
              "world size " + std::to_string(h.world) + " is not " + std::to_string(c.world_size);
        } else if (h.rank < 1 || h.rank >= c.world_size) {
          reason = "rank " + std::to_string(h.rank) + " is out of range";
        } else if (peers_[static_cast<std::size_t>(h.rank)] >= 0) {
          reason = "rank " + std::to_string(h.rank) + " joined twice";
        }
      }
      if (!reason.empty()) {
        last_rejection = reason;
        send_reply(fd, 1, reason);
        ::close(fd);
        continue;
      }
      send_reply(fd, 0, "");
      peers_[static_cast<std::size_t>(h.rank)] = fd;
      --missing;
    }
  } catch (...) {
    ::close(lfd);
    throw;
  }
  ::close(lfd);
}

void TcpComm::rendezvous_peer() {
  const TcpCommConfig& c = config_;
  const double deadline = os::now_seconds() + c.rendezvous_timeout;
  const std::string where =
      "rendezvous with rank 0 at " + c.master_addr + ":" + std::to_string(c.master_port);
  std::string why = "no attempt";
  for (;;) {
    if (c.stop && c.stop()) throw Error(kPreempted, "SIGTERM during the rendezvous");
    if (os::now_seconds() > deadline) {
      lost(where + ": gave up after " + std::to_string(static_cast<int>(c.rendezvous_timeout)) +
           " s (" + why + ")");
    }
    int fd = try_connect(c.master_addr, c.master_port, 1.0, why);
    if (fd >= 0) {
      tune(fd);
      try {
        Hello h{kHelloMagic,  kVersion, c.rank,
                c.world_size, c.round,  static_cast<std::uint32_t>(c.job.size())};
        send_all(fd, &h, sizeof h, 5, where);
        send_all(fd, c.job.data(), c.job.size(), 5, where);
        Reply r{};
        recv_all(fd, &r, sizeof r, std::max(1.0, deadline - os::now_seconds()), where);
        std::string msg(std::min<std::uint32_t>(r.msg_len, 4096), '\0');
        recv_all(fd, msg.data(), msg.size(), 5, where);
        if (r.magic == kHelloMagic && r.status == 0) {
          peers_.assign(1, fd);
          return;
        }
        why = "turned away: " + msg;  // e.g. the previous round's rank 0, not gone yet
      } catch (const Error& e) {
        why = e.what();
      }
      ::close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

template <typename T>
void TcpComm::allreduce(T* data, std::size_t n) {
  if (config_.world_size <= 1) return;
  const std::uint32_t op = sizeof(T) == 8 ? kSumF64 : kSumF32;
  const double t = config_.peer_timeout;
  Header h{kOpMagic, op, n};
  if (config_.rank != 0) {
    send_all(peers_[0], &h, sizeof h, t, who(0));
    send_all(peers_[0], data, n * sizeof(T), t, who(0));
    Header back{};
    recv_all(peers_[0], &back, sizeof back, t, who(0));
    if (back.magic != kOpMagic || back.op != op || back.count != n) {
      throw Error(ExitStatus::software, "all-reduce: rank 0 answered another operation");
    }
    recv_all(peers_[0], data, n * sizeof(T), t, who(0));
    return;
  }
  std::vector<double> sum(data, data + n);
  std::vector<T> buf(n);
  for (int r = 1; r < config_.world_size; ++r) {
    int fd = peers_[static_cast<std::size_t>(r)];
    Header in{};
    recv_all(fd, &in, sizeof in, t, who(r));
    if (in.magic != kOpMagic || in.op != op || in.count != n) {
      throw Error(ExitStatus::software,
                  "all-reduce: " + who(r) + " called another operation (the ranks disagree)");
    }
    recv_all(fd, buf.data(), n * sizeof(T), t, who(r));
    for (std::size_t i = 0; i < n; ++i) sum[i] += buf[i];
  }
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<T>(sum[i]);
  for (int r = 1; r < config_.world_size; ++r) {
    int fd = peers_[static_cast<std::size_t>(r)];
    send_all(fd, &h, sizeof h, t, who(r));
    send_all(fd, data, n * sizeof(T), t, who(r));
  }
}

void TcpComm::allreduce_sum(double* data, std::size_t n) {
  allreduce(data, n);
}
void TcpComm::allreduce_sum(float* data, std::size_t n) {
  allreduce(data, n);
}

void TcpComm::broadcast(std::string& bytes) {
  if (config_.world_size <= 1) return;
  const double t = config_.peer_timeout;
  if (config_.rank == 0) {
    Header h{kOpMagic, kBroadcast, bytes.size()};
    for (int r = 1; r < config_.world_size; ++r) {
      send_all(peers_[static_cast<std::size_t>(r)], &h, sizeof h, t, who(r));
      send_all(peers_[static_cast<std::size_t>(r)], bytes.data(), bytes.size(), t, who(r));
    }
    return;
  }
  Header h{};
  recv_all(peers_[0], &h, sizeof h, t, who(0));
  if (h.magic != kOpMagic || h.op != kBroadcast || h.count > (1ULL << 36)) {
    throw Error(ExitStatus::software, "broadcast: rank 0 sent another operation");
  }
  bytes.resize(h.count);
  recv_all(peers_[0], bytes.data(), bytes.size(), t, who(0));
}

}  // namespace sia::worker
