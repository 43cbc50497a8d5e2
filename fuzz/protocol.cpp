// Wire messages of the control channel: channel::decode() of one frame, as the hub and the
// agents read every frame they receive; a message that decodes is encoded again and must
// decode to the same type.
#include "channel/protocol.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sia::fuzz::run([&] {
    auto m = sia::channel::decode(sia::fuzz::text(data, size));
    auto again = sia::channel::decode(sia::channel::encode(m));
    if (sia::channel::type_name(again) != sia::channel::type_name(m)) std::abort();
  });
}
