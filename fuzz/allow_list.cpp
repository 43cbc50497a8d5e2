// The controller's allow-list of agent and client keys: AllowList::parse() of the input as
// `controller.allow` names it (TOML, or its JSON twin when it opens with '{').
#include "channel/allow_list.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sia::fuzz::run([&] {
    sia::channel::AllowList::parse(std::string(sia::fuzz::text(data, size)), "allow.toml");
  });
}
