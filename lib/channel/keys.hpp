// CURVE key pairs for the control channel, as files people can read and copy:
//   NAME.key  (mode 0600)   public = "<z85>"  secret = "<z85>"   (TOML)
//   NAME.pub  (mode 0644)   public = "<z85>"                      (TOML)
// Keys are Z85 text, 40 characters for 32 bytes (libzmq's zmq_curve_keypair).
// load_secret_key() refuses a key file whose mode is not exactly 0600 (status 77, "KEY:
// mode 0644, expected 0600") before reading it, and checks that its public key is the one
// its secret key gives. Missing files are status 66, unreadable ones 77, malformed ones 78
// (they are configuration), each naming the file and field.
// Thread-safety: plain values; the functions touch only the files named.
#pragma once

#include <string>
#include <string_view>

namespace sia::channel {

struct KeyPair {
  std::string public_key;  // z85, 40 characters
  std::string secret_key;  // z85, 40 characters
};

// A fresh key pair. Status 70 if this libzmq has no CURVE.
KeyPair generate_keypair();

// True for 40 characters of the Z85 alphabet that decode to 32 bytes.
bool valid_z85_key(std::string_view key);

// The public key of a secret key (both z85). Status 78 on a malformed key.
std::string public_of(const std::string& secret_key);

struct KeyFiles {
  std::string key_file;  // PREFIX.key
  std::string pub_file;  // PREFIX.pub
  KeyPair pair;
};

// `sia-ctl keygen PREFIX`: writes PREFIX.key (0600, written atomically) and PREFIX.pub.
// An existing file is not replaced unless `force` (status 73).
KeyFiles write_key_files(const std::string& prefix, bool force);

// Reads a secret key file (see above).
KeyPair load_secret_key(const std::string& file);

// Reads a public key: a .pub or .key file (its "public" field), or a file holding the bare
// 40-character key. The file's mode is not checked.
std::string load_public_key(const std::string& file);

// The keys `sia-ctl serve` makes for itself when no [controller] secret_key is set, in
// STATE_DIR/keys/ (mode 0700): server.key and server.pub, the controller's pair (agents
// pin server.pub), and admin.key and admin.pub, a client key the allow-list always holds
// as client "admin" (sia-ctl client commands with the same state directory use it).
// Made once (0600 secret keys, 0644 public ones) and read again on every later start.
struct LocalKeys {
  std::string dir;  // STATE_DIR/keys
  KeyPair server;
  KeyPair admin;
};
LocalKeys make_local_keys(const std::string& state_dir);
// STATE_DIR/keys/NAME.{key,pub}, for NAME "server" or "admin".
std::string local_key_file(const std::string& state_dir, std::string_view name,
                           std::string_view ext);

// The TOML text of the two files.
std::string key_file_text(const KeyPair& pair, std::string_view name);
std::string pub_file_text(const std::string& public_key, std::string_view name);

}  // namespace sia::channel
