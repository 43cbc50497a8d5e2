// log: where library code sends its progress lines and warnings, so that it never names
// the program it runs in. A line goes to the installed sink; the default sink writes
// "<program>: <line>" to stderr -- info lines unless quiet (verbosity < 0), debug lines
// when verbose (verbosity >= 1) -- with the program name set once by the tool's main
// (cli::run sets it; cli::set_verbosity sets the verbosity).
// Thread-safety: set_program, set_verbosity and set_sink at start-up, before other
// threads log; info and debug from any thread (the default sink writes each line with one
// write(2)).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace sia::log {

enum class Level { debug, info };

// One line, no newline.
using Sink = std::function<void(Level level, std::string_view line)>;

void set_program(std::string_view name);
const std::string& program();

// -q => -1, default 0, -v => 1, -vv => 2.
void set_verbosity(int level);
int verbosity();

// Replaces the sink; a null one restores the default.
void set_sink(Sink sink);

void info(std::string_view line);   // shown unless quiet
void debug(std::string_view line);  // shown when verbose

}  // namespace sia::log
