// `sia-ctl keygen NAME` as a library call: writes NAME.key (mode 0600: public and secret
// key) and NAME.pub (the public key) and prints what it wrote -- a table, or a KeyFiles
// document with -o json ({name, public_key, key_file, pub_file}). Existing files are not
// replaced unless `force` (status 73).
// Thread-safety: one thread (writes files and stdout).
#pragma once

#include <string>

#include "cli/tool.hpp"

namespace sia::channel {

struct KeygenArgs {
  std::string name;  // a path prefix: "keys/t4-0" writes keys/t4-0.key and keys/t4-0.pub
  bool force = false;
  cli::Format format = cli::Format::table;
};

int run_keygen(const KeygenArgs& args);

}  // namespace sia::channel
