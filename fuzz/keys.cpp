// CURVE key files: the input as a secret key file (mode 0600) read by load_secret_key()
// and as a public key file read by load_public_key(), as the daemon, the agents and the
// clients read theirs.
#include "channel/keys.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = sia::fuzz::scratch_path("fuzz.key");
  sia::fuzz::write_scratch(file, sia::fuzz::text(data, size));
  sia::fuzz::run([&] { sia::channel::load_secret_key(file); });
  return sia::fuzz::run([&] { sia::channel::load_public_key(file); });
}
