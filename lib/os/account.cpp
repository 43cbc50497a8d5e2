#include "os/account.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace sia::os {

namespace {

// getpw*_r with a buffer grown until the entry fits.
template <typename Lookup>
std::optional<Account> lookup(Lookup get, const std::string& what) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<std::size_t>(hint) : 4096);
  passwd pw{};
  passwd* found = nullptr;
  int rc;
  while ((rc = get(&pw, buf.data(), buf.size(), &found)) == ERANGE && buf.size() < (1u << 20)) {
    buf.resize(buf.size() * 2);
  }
  // ENOENT, ESRCH, EBADF, EPERM: some implementations' way of saying "no such entry".
  if (rc != 0 && rc != ENOENT && rc != ESRCH && rc != EBADF && rc != EPERM) {
    throw Error(ExitStatus::unavailable,
                "cannot look up account " + what + ": " + std::strerror(rc));
  }
  if (!found) return std::nullopt;
  Account a;
  a.name = pw.pw_name;
  a.uid = pw.pw_uid;
  a.gid = pw.pw_gid;
  a.home = pw.pw_dir ? pw.pw_dir : "/";
  int n = 32;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  while (::getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
    if (n <= static_cast<int>(groups.size())) n = static_cast<int>(groups.size()) * 2;
    if (n > 65536) throw Error(ExitStatus::unavailable, "account " + what + ": too many groups");
    groups.resize(static_cast<std::size_t>(n));
  }
  groups.resize(static_cast<std::size_t>(n));
  a.groups = std::move(groups);
  return a;
}

}  // namespace

std::optional<Account> find_account(const std::string& name) {
  return lookup([&](passwd* pw, char* buf, std::size_t size,
                    passwd** out) { return ::getpwnam_r(name.c_str(), pw, buf, size, out); },
                name);
}

std::optional<Account> find_account(uid_t uid) {
  return lookup([&](passwd* pw, char* buf, std::size_t size,
                    passwd** out) { return ::getpwuid_r(uid, pw, buf, size, out); },
                "uid " + std::to_string(uid));
}

Account current_account() {
  const uid_t uid = ::geteuid();
  if (auto a = find_account(uid)) return *a;
  Account a;
  a.name = "uid " + std::to_string(uid);
  a.uid = uid;
  a.gid = ::getegid();
  a.groups = {a.gid};
  return a;
}

}  // namespace sia::os
