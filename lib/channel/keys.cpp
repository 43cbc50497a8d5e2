#include "channel/keys.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <zmq.h>
#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/node.hpp"
#include "core/toml_json.hpp"
#include "os/atomic_file.hpp"
#include "os/make_dirs.hpp"

namespace sia::channel {

namespace {

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The file's text; 66 when it does not exist, 77 when it may not be read.
std::string read_key_text(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) {
    int err = errno;
    ExitStatus s = err == EACCES || err == EPERM ? ExitStatus::no_perm : ExitStatus::no_input;
    throw Error(s, file + ": cannot read: " + std::strerror(err));
  }
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (1 << 16)) {
    text.append(buf, n);
  }
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) throw Error(ExitStatus::io, file + ": read error");
  return text;
}

std::string trimmed(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

std::string key_field(const Node& root, std::string_view field) {
  Node n = root.at(field);
  std::string k = n.as_string();
  if (!valid_z85_key(k)) n.expected("a 40-character Z85 CURVE key");
  return k;
}

}  // namespace

bool valid_z85_key(std::string_view key) {
  if (key.size() != 40) return false;
  static constexpr std::string_view kAlphabet =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  for (char c : key) {
    if (kAlphabet.find(c) == std::string_view::npos) return false;
  }
  std::string z(key);
  std::uint8_t out[32];
  return zmq_z85_decode(out, z.c_str()) != nullptr;
}

KeyPair generate_keypair() {
  char pub[41] = {};
  char sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    throw Error(ExitStatus::software, std::string("cannot make a CURVE key pair: ") +
                                          zmq_strerror(zmq_errno()) +
                                          " (this libzmq was built without CURVE)");
  }
  return {pub, sec};
}

std::string public_of(const std::string& secret_key) {
  if (!valid_z85_key(secret_key)) {
    throw Error(ExitStatus::config, "not a 40-character Z85 CURVE secret key");
  }
  char pub[41] = {};
  if (zmq_curve_public(pub, secret_key.c_str()) != 0) {
    throw Error(ExitStatus::config,
                std::string("cannot derive a public key: ") + zmq_strerror(zmq_errno()));
  }
  return pub;
}

std::string key_file_text(const KeyPair& pair, std::string_view name) {
  return "# sia CURVE key pair \"" + std::string(name) +
         "\" (sia-ctl keygen). Keep it secret: mode 0600.\n"
         "public = \"" +
         pair.public_key + "\"\nsecret = \"" + pair.secret_key + "\"\n";
}

std::string pub_file_text(const std::string& public_key, std::string_view name) {
  return "# sia CURVE public key \"" + std::string(name) +
         "\" (sia-ctl keygen): put it in the controller's allow-list,\n"
         "# or give it to agents and clients as the server key.\n"
         "public = \"" +
         public_key + "\"\n";
}

KeyFiles write_key_files(const std::string& prefix, bool force) {
  if (prefix.empty()) throw Error(ExitStatus::usage, "keygen: the key name is empty");
  KeyFiles f;
  f.key_file = prefix + ".key";
  f.pub_file = prefix + ".pub";
  if (!force) {
    for (const auto& p : {f.key_file, f.pub_file}) {
      std::error_code ec;
      if (std::filesystem::exists(std::filesystem::symlink_status(p, ec))) {
        throw Error(ExitStatus::cant_create,
                    p + ": already exists; not replaced (remove it, or use --force)");
      }
    }
  }
  f.pair = generate_keypair();
  std::string name = std::filesystem::path(prefix).filename().string();
  os::write_file_atomic(f.key_file, key_file_text(f.pair, name), 0600);
  // The umask may only have removed bits; make sure of exactly 0600 anyway.
  if (::chmod(f.key_file.c_str(), 0600) != 0) {
    throw Error(ExitStatus::cant_create,
                f.key_file + ": cannot set mode 0600: " + std::strerror(errno));
  }
  os::write_file_atomic(f.pub_file, pub_file_text(f.pair.public_key, name), 0644);
  return f;
}

KeyPair load_secret_key(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    int err = errno;
    ExitStatus s = err == EACCES || err == EPERM ? ExitStatus::no_perm : ExitStatus::no_input;
    throw Error(s, file + ": cannot read: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) throw Error(ExitStatus::config, file + ": not a regular file");
  if ((st.st_mode & 07777) != 0600) {
    throw Error(ExitStatus::no_perm, file + ": mode " + octal_mode(st.st_mode) +
                                         ", expected 0600 (the secret key must be private; "
                                         "chmod 600 " +
                                         file + ")");
  }
  std::string text = read_key_text(file);
  nlohmann::json j = toml_to_json(text, file, ExitStatus::config);
  Node root(j, file, "", ExitStatus::config);
  KeyPair pair;
  pair.secret_key = key_field(root, "secret");
  pair.public_key = key_field(root, "public");
  if (public_of(pair.secret_key) != pair.public_key) {
    root.at("public").fail("does not belong to the secret key in the same file");
  }
  return pair;
}

std::string load_public_key(const std::string& file) {
  std::string text = read_key_text(file);
  std::string bare = trimmed(text);
  if (valid_z85_key(bare)) return bare;
  nlohmann::json j = toml_to_json(text, file, ExitStatus::config);
  Node root(j, file, "", ExitStatus::config);
  return key_field(root, "public");
}

}  // namespace sia::channel

namespace sia::channel {

std::string local_key_file(const std::string& state_dir, std::string_view name,
                           std::string_view ext) {
  return (std::filesystem::path(state_dir) / "keys" / (std::string(name) + "." + std::string(ext)))
      .string();
}

LocalKeys make_local_keys(const std::string& state_dir) {
  LocalKeys k;
  k.dir = (std::filesystem::path(state_dir) / "keys").string();
  std::error_code ec;
  os::make_dirs(state_dir);  // private (0700) whatever the umask, as the state store makes it
  if (::mkdir(k.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(ExitStatus::cant_create, k.dir + ": cannot create: " + std::strerror(errno));
  }
  if (::chmod(k.dir.c_str(), 0700) != 0) {
    throw Error(ExitStatus::cant_create, k.dir + ": cannot set mode 0700: " + std::strerror(errno));
  }
  auto pair = [&](std::string_view name) {
    const std::string key = local_key_file(state_dir, name, "key");
    if (!std::filesystem::exists(std::filesystem::symlink_status(key, ec))) {
      return write_key_files((std::filesystem::path(k.dir) / name).string(), true).pair;
    }
    return load_secret_key(key);
  };
  k.server = pair("server");
  k.admin = pair("admin");
  return k;
}

}  // namespace sia::channel
