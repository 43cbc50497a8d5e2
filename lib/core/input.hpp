// The one way sia programs read a whole input: a file named on the command line (or in a
// configuration), or "-" for standard input. Bounded in size and in waiting:
//  - at most max_input_bytes() bytes (64 MiB, or SIA_MAX_INPUT): a larger input -- a
//    2 GB file, /dev/zero, an endless pipe -- is refused with status 65 once the limit is
//    passed (at once for a regular file, by its size), never read into memory whole;
//  - a named FIFO is opened without blocking, and one that has no writer for
//    kFifoWriterWaitSeconds is refused with status 66 instead of waiting forever; a pipe
//    with a writer (stdin, `<(command)`) is read for as long as the writer takes.
// Thread-safety: pure functions but for the read itself; reading stdin is a one-time affair.
#pragma once

#include <cstddef>
#include <string>

namespace sia {

inline constexpr std::size_t kDefaultMaxInput = std::size_t{64} << 20;
inline constexpr int kFifoWriterWaitSeconds = 5;

// The size limit: SIA_MAX_INPUT (bytes, or with a K, M or G suffix: KiB, MiB, GiB; at least
// 1K) when set, else kDefaultMaxInput. A malformed value is Error(config) naming it.
std::size_t max_input_bytes();
// Reads SIA_MAX_INPUT's syntax ("65536", "64M", "1G"); 0 when it is not a size in range.
std::size_t parse_input_size(const std::string& text);

// Reads the whole of a file ("-" = stdin) under the limits above. Errors: 66 missing,
// unreadable, a directory, or a FIFO without a writer; 65 larger than the limit; 74 a read
// error. Every message names the file ("<stdin>" for "-").
std::string read_input(const std::string& file);
std::string read_input(const std::string& file, std::size_t limit);

// "-" is shown as "<stdin>".
std::string display_name(const std::string& file);

}  // namespace sia
