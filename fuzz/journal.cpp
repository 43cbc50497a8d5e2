// The controller's journal (STATE/journal.jsonl): StateStore::load() of a state directory
// holding only the input as its journal, as every `sia-ctl` command and the daemon load
// it, then the book used (use_book.hpp). A line that is a JSON object without "crc" gets
// its right checksum first, so that the fuzzer reaches the records' readers behind the
// check; lines with a "crc" keep theirs.
#include <filesystem>

#include "core/json_limits.hpp"
#include "ctl/journal.hpp"
#include "ctl/state_store.hpp"
#include "fuzz_input.hpp"
#include "use_book.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string state = sia::fuzz::scratch_path("journal-state");
  std::filesystem::create_directories(state);
  const std::string_view in = sia::fuzz::text(data, size);
  std::string journal;
  for (std::size_t pos = 0; pos < in.size();) {
    std::size_t nl = in.find('\n', pos);
    const bool complete = nl != std::string_view::npos;
    std::string_view line = in.substr(pos, complete ? nl - pos : std::string_view::npos);
    pos = complete ? nl + 1 : in.size();
    nlohmann::json rec = sia::parse_json_bounded(line);
    if (!rec.is_discarded() && rec.is_object() && !rec.contains("crc")) {
      rec["crc"] = sia::ctl::record_crc(rec);
      journal += rec.dump();
    } else {
      journal += line;
    }
    if (complete) journal += '\n';
  }
  sia::fuzz::write_scratch(state + "/journal.jsonl", journal);
  return sia::fuzz::run([&] {
    std::vector<std::string> warnings;
    sia::fuzz::use_book(sia::ctl::StateStore(state).load(false, &warnings));
  });
}
