// The fast way in for a GoodputMatrix document (sia-solve's input, 3 MB at 2,048 GPUs):
// the JSON text is read straight into a GoodputMatrix, one pass with a JsonCursor, no
// nlohmann tree, no Node paths. The fast reader is all-or-nothing: it returns exactly the matrix
// that read_document + parse_goodput_matrix would return, or nothing at all -- on anything it does
// not take on itself (TOML, JSON Lines, what JsonCursor declines, a duplicate key, "jobs" before
// "cluster", any value the tree reader would refuse). read_goodput_matrix then reads the text again
// the tree way, so every message about bad input (file, field, expectation) is the tree reader's
// own. Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/goodput_matrix.hpp"

namespace sia {

// The matrix in `text` (a whole GoodputMatrix document), or nullopt: see above.
std::optional<GoodputMatrix> parse_goodput_matrix_fast(std::string_view text);

// The GoodputMatrix document `text` read from `file` ("-" = stdin, for messages): the fast
// reader, else read_document's and parse_goodput_matrix's way (and their errors).
GoodputMatrix parse_goodput_matrix_text(std::string_view text, const std::string& file);

// Same, reading the file ("-" = stdin) first; errors as read_document's.
GoodputMatrix read_goodput_matrix(const std::string& file);

}  // namespace sia
