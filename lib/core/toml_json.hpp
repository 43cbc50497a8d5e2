// Converts a TOML text into the equivalent JSON value (tables -> objects, arrays -> arrays,
// integers stay integers, dates and times become strings) so that one validator serves a
// file and its JSON twin. Parse errors carry "file:line:column".
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/exit_status.hpp"

namespace sia {

nlohmann::json toml_to_json(std::string_view text, const std::string& file, ExitStatus status);

}  // namespace sia
