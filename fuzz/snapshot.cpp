// The controller's snapshot (STATE/snapshot.json): StateStore::load() of a state directory
// holding only the input as its snapshot, then the book used (use_book.hpp). An input that
// is a JSON object with "data" and without "checksum" gets its right checksum first, so
// that the fuzzer reaches JobBook::from_json behind the check.
#include <filesystem>

#include "core/json_limits.hpp"
#include "ctl/journal.hpp"
#include "ctl/state_store.hpp"
#include "fuzz_input.hpp"
#include "use_book.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string state = sia::fuzz::scratch_path("snapshot-state");
  std::filesystem::create_directories(state);
  const std::string_view in = sia::fuzz::text(data, size);
  nlohmann::json root = sia::parse_json_bounded(in);
  if (!root.is_discarded() && root.is_object() && root.contains("data") &&
      !root.contains("checksum")) {
    root["checksum"] = sia::ctl::data_checksum(root["data"]);
    sia::fuzz::write_scratch(state + "/snapshot.json", root.dump());
  } else {
    sia::fuzz::write_scratch(state + "/snapshot.json", in);
  }
  return sia::fuzz::run([&] {
    std::vector<std::string> warnings;
    sia::fuzz::use_book(sia::ctl::StateStore(state).load(false, &warnings));
  });
}
