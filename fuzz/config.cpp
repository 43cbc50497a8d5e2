// The controller's configuration file (sia-config(5)): load_config() with the input as
// the --config file (no system file, no environment), then the effective settings printed
// as `sia-ctl config` prints them.
#include <nlohmann/json.hpp>

#include "ctl/config.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = sia::fuzz::scratch_path("config.toml");
  sia::fuzz::write_scratch(file, sia::fuzz::text(data, size));
  return sia::fuzz::run([&] {
    sia::ctl::ConfigSources sources;
    sources.config_file = file;
    sources.system_file = "";
    sources.getenv = [](const char*) -> const char* { return nullptr; };
    sia::ctl::Settings s = sia::ctl::load_config(sources);
    sia::ctl::config_to_json(s).dump();
    sia::ctl::config_table(s);
  });
}
