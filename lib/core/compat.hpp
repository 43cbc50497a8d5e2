// The behaviour profile a program's --compat flag picks: Sia as this project documents it
// ("default"), or the behaviour of the scheduler evaluated in the Sia paper (Subramanya et
// al., SOSP '23) with its quirks ("reference"), for comparing against the paper's numbers.
// The string is parsed here, once; each module turns the enum into its own named quirks
// (e.g. model/estimator_quirks.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sia {

enum class Compat { standard, reference };

// "default" -> standard, "reference" -> reference; anything else throws Error(usage)
// naming --compat and the known profiles.
Compat parse_compat(std::string_view text);
// The flag's spelling of a profile ("default" | "reference"), also the "profile" field of
// the documents it produces.
const char* compat_name(Compat compat);
// Every profile's name, in order (for flag checks and help).
std::vector<std::string> compat_names();

}  // namespace sia
