// Account: a local user account as the password and group databases give it (lib/os), to
// run a program as that user (SpawnOptions::account) and to hand it files (give_in and
// give_fd in safe_open.hpp).
// find_account() reads the databases with getpwnam_r/getpwuid_r and getgrouplist, so it is
// safe from several threads; it may consult NSS (LDAP, ...) and so must be called before
// fork(), never in a child.
// Thread-safety: plain values; the functions may be called from any thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sia::os {

struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;              // the primary group
  std::vector<gid_t> groups;  // every group it is in, the primary one included
  std::string home;           // HOME
};

// nullopt when there is no such account. Status 69 when the database cannot be read.
std::optional<Account> find_account(const std::string& name);
std::optional<Account> find_account(uid_t uid);

// The user this process runs as (its effective uid): its account, or one named "uid N"
// when the database has none.
Account current_account();

}  // namespace sia::os
