#include "channel/ipc_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace sia::channel {

namespace {

bool is_ipc(const std::string& endpoint) {
  return endpoint.compare(0, 6, "ipc://") == 0;
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string uid_list(const std::vector<uid_t>& uids) {
  std::string s;
  for (uid_t u : uids) s += (s.empty() ? "" : ", ") + std::to_string(u);
  return s;
}

[[noreturn]] void untrusted(const std::string& endpoint, const std::string& what,
                            const struct stat& st, const std::vector<uid_t>& trusted,
                            const std::string& why) {
  throw Error(ExitStatus::no_perm,
              "connect " + endpoint + ": " + what + " (owner uid " + std::to_string(st.st_uid) +
                  ", mode " + mode_text(st.st_mode) + ") " + why +
                  ": another user could have bound the controller's socket there; an agent "
                  "trusts an ipc:// socket only in directories owned by uids " +
                  uid_list(trusted) +
                  " (root, itself, --controller-user) and writable by no one else");
}

}  // namespace

std::vector<uid_t> trusted_uids(std::optional<uid_t> controller) {
  std::vector<uid_t> out = {0};
  const uid_t own = ::geteuid();
  if (own != 0) out.push_back(own);
  if (controller && std::find(out.begin(), out.end(), *controller) == out.end()) {
    out.push_back(*controller);
  }
  return out;
}

void refuse_abstract_ipc(const std::string& endpoint) {
  if (endpoint.compare(0, 7, "ipc://@") != 0) return;
  throw Error(ExitStatus::config,
              "connect " + endpoint +
                  ": an abstract ipc:// endpoint has no directory to protect it (any local "
                  "user may bind the name), so an agent does not trust it; use "
                  "ipc:///run/sia/ctl (a directory of the controller's) or tcp:// with CURVE");
}

std::optional<std::string> trusted_ipc_endpoint(const std::string& endpoint,
                                                const std::vector<uid_t>& trusted,
                                                std::string& waiting) {
  if (!is_ipc(endpoint)) return endpoint;
  refuse_abstract_ipc(endpoint);
  const std::string path = endpoint.substr(6);
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) {
    const int err = errno;
    if (err == ENOENT) {
      waiting = "no directory " + dir + " yet (the controller makes it when it starts)";
      return std::nullopt;
    }
    throw Error(ExitStatus::no_perm,
                "connect " + endpoint + ": cannot resolve " + dir + ": " + std::strerror(err));
  }
  const std::string resolved = real;
  std::free(real);
  auto is_trusted = [&](uid_t uid) {
    return std::find(trusted.begin(), trusted.end(), uid) != trusted.end();
  };
  // "/" first, then each directory below it, down to the socket's.
  std::vector<std::string> dirs = {"/"};
  for (std::size_t i = 2; i <= resolved.size(); ++i) {
    if (i == resolved.size() || resolved[i] == '/') dirs.push_back(resolved.substr(0, i));
  }
  for (std::size_t k = 0; k < dirs.size(); ++k) {
    const std::string& cur = dirs[k];
    const bool last = k + 1 == dirs.size();
    struct stat st {};
    if (::lstat(cur.c_str(), &st) != 0) {
      throw Error(ExitStatus::no_perm,
                  "connect " + endpoint + ": cannot read " + cur + ": " + std::strerror(errno));
    }
    const std::string what = (last ? "the socket's directory " : "the directory ") + cur;
    if (!S_ISDIR(st.st_mode)) untrusted(endpoint, what, st, trusted, "is not a directory");
    if (!is_trusted(st.st_uid)) untrusted(endpoint, what, st, trusted, "has an untrusted owner");
    const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (others_write && (last || !(st.st_mode & S_ISVTX))) {
      untrusted(endpoint, what, st, trusted, "is writable by others");
    }
  }
  const std::string socket_path = (resolved == "/" ? "" : resolved) + "/" + name;
  struct stat st {};
  if (::lstat(socket_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      untrusted(endpoint, "the socket " + socket_path, st, trusted, "is not a socket");
    }
    if (!is_trusted(st.st_uid)) {
      untrusted(endpoint, "the socket " + socket_path, st, trusted, "has an untrusted owner");
    }
  } else if (errno != ENOENT) {
    throw Error(ExitStatus::no_perm, "connect " + endpoint + ": cannot read " + socket_path + ": " +
                                         std::strerror(errno));
  }
  return "ipc://" + socket_path;
}

}  // namespace sia::channel
