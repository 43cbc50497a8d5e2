#include "app/sia-ctl/keygen_command.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "channel/keys.hpp"
#include "cli/table.hpp"

namespace sia::channel {

int run_keygen(const KeygenArgs& args) {
  KeyFiles f = write_key_files(args.name, args.force);
  std::string name = std::filesystem::path(args.name).filename().string();
  if (args.format == cli::Format::table) {
    cli::Table t({"name", "public key", "secret key file", "public key file"});
    t.add({name, f.pair.public_key, f.key_file, f.pub_file});
    cli::write_stdout(t.render());
  } else {
    cli::print_document("KeyFiles", {{"generator", "sia-ctl"}},
                        {{"name", name},
                         {"public_key", f.pair.public_key},
                         {"key_file", f.key_file},
                         {"pub_file", f.pub_file}});
  }
  return 0;
}

}  // namespace sia::channel
