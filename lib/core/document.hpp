// Documents: the envelope every sia program reads and writes,
//   {"apiVersion": "sia/v1", "kind": K, "metadata": {...}, "data": {...}}
// read from a file or "-" (stdin), as JSON, JSON Lines (one envelope per line) or TOML (the
// human-written twin: the data part, optionally with apiVersion and kind at the top).
// Readers check the kind and the major apiVersion and ignore unknown fields; writers emit
// deterministic JSON (sorted keys, no NaN or infinity).
// Thread-safety: plain values; reading stdin is, of course, a one-time affair.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/input.hpp"  // read_input, display_name: documents are read through it
#include "core/node.hpp"

namespace sia {

inline constexpr std::string_view kApiVersion = "sia/v1";

struct Document {
  std::string file;  // as named on the command line ("-" is shown as "<stdin>")
  std::string kind;
  std::string api_version;
  std::shared_ptr<const nlohmann::json> root;  // the whole envelope
  ExitStatus status = ExitStatus::data;        // what a validation error maps to

  Node data() const;      // root.data (required)
  Node metadata() const;  // root.metadata, or an empty object
};

// Parses one or more documents from a file: a JSON envelope, JSON Lines of envelopes, or a
// TOML file (decided by extension, or by content for stdin). `kinds` lists what the caller
// accepts (the first is assumed for TOML without a kind). Errors name the file and field.
std::vector<Document> read_documents(const std::string& file, const std::vector<std::string>& kinds,
                                     ExitStatus status = ExitStatus::data);
// Exactly one document.
Document read_document(const std::string& file, const std::vector<std::string>& kinds,
                       ExitStatus status = ExitStatus::data);
// Same, from text already in memory (tests, the in-process pipeline, a program's output).
// Text that is empty or only white space is an error ("FILE: empty input, expected a sia
// document").
std::vector<Document> parse_documents(std::string_view text, const std::string& file,
                                      const std::vector<std::string>& kinds,
                                      ExitStatus status = ExitStatus::data);
// Exactly one document, from text already in memory.
Document parse_document(std::string_view text, const std::string& file,
                        const std::vector<std::string>& kinds,
                        ExitStatus status = ExitStatus::data);

// For one-shot programs that exit right after writing their answer (sia-estimate,
// sia-solve, sia-place): documents read from now on are never freed. Freeing the tree of
// a 3 MB GoodputMatrix costs ~15 ms; exiting frees it for nothing. Not for long-running
// processes. Thread-safety: call once, first thing in main.
void keep_documents_until_exit();

// Checks apiVersion ("sia/v1", any sia/v1.x) and kind; throws with the list of supported
// values otherwise.
void check_envelope(const Node& root, const std::vector<std::string>& kinds);

// Serialises an envelope. `pretty` indents by two spaces; otherwise one line.
// Throws Error(software) if the data holds NaN or infinity.
std::string dump_document(std::string_view kind, const nlohmann::json& metadata,
                          const nlohmann::json& data, bool pretty);
std::string dump_json(const nlohmann::json& value, bool pretty);

}  // namespace sia
