#include "core/input.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"

namespace sia {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;
constexpr std::size_t kMinInput = std::size_t{1} << 10;
constexpr std::size_t kMaxInput = std::size_t{1} << 40;

std::string size_words(std::size_t bytes) {
  const char* units[] = {"GiB", "MiB", "KiB"};
  const int shifts[] = {30, 20, 10};
  for (int i = 0; i < 3; ++i) {
    const std::size_t unit = std::size_t{1} << shifts[i];
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + units[i];
  }
  return std::to_string(bytes) + " bytes";
}

[[noreturn]] void too_large(const std::string& name, std::size_t limit) {
  throw Error(ExitStatus::data, name + ": larger than " + size_words(limit) +
                                    ", the most sia reads from one input (SIA_MAX_INPUT)");
}

// A FIFO opened without blocking: returns once a writer is there (data to read, or nothing
// yet but the writer holds it open: a non-blocking read says EAGAIN) or has come and gone
// (POLLHUP: the input is empty); refuses one that has had no writer for the wait.
void wait_for_writer(int fd, const std::string& name, std::string& text) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(kFifoWriterWaitSeconds);
  for (;;) {
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1) {
      text.push_back(c);
      return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno != EINTR) {
      throw Error(ExitStatus::io, name + ": read error: " + std::strerror(errno));
    }
    // No writer at the moment: wait for one to write or to close.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      throw Error(ExitStatus::no_input, name +
                                            ": a FIFO that no program opened for writing within " +
                                            std::to_string(kFifoWriterWaitSeconds) + " s");
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    if (r > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN)) return;
  }
}

// Appends all of `fd` to `text`, at most `limit` bytes.
void read_fd(int fd, const std::string& name, std::size_t limit, std::string& text) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t at = ::lseek(fd, 0, SEEK_CUR);
    const off_t left = st.st_size - (at > 0 ? at : 0);
    if (left > 0 && static_cast<std::uintmax_t>(left) > limit) too_large(name, limit);
    // A 3 MB matrix read in 64 KiB pieces otherwise reallocates and copies a dozen times.
    if (left > 0) text.reserve(static_cast<std::size_t>(left) + 1);
  }
  for (;;) {
    const std::size_t old = text.size();
    // Full: one byte more (read aside, not into a buffer grown past the limit) is too much.
    char extra = 0;
    const std::size_t want = old >= limit ? 1 : std::min(kChunk, limit - old);
    // Doubling, but never past the limit: an input at the limit costs it about twice.
    if (old < limit && old + want > text.capacity()) {
      text.reserve(std::min(limit, std::max(old + want, 2 * text.capacity())));
    }
    if (old < limit) text.resize(old + want);
    const ssize_t n = ::read(fd, old >= limit ? &extra : text.data() + old, want);
    if (old >= limit && n > 0) too_large(name, limit);
    if (old < limit) text.resize(old + (n > 0 ? static_cast<std::size_t>(n) : 0));
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw Error(err == EISDIR ? ExitStatus::no_input : ExitStatus::io,
                  name + ": read error: " + std::strerror(err));
    }
  }
}

}  // namespace

std::string display_name(const std::string& file) {
  return file == "-" ? "<stdin>" : file;
}

std::size_t parse_input_size(const std::string& text) {
  if (text.empty() || text.size() > 20) return 0;
  std::size_t digits = 0;
  std::size_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    value = value * 10 + static_cast<std::size_t>(text[digits] - '0');
    if (value > kMaxInput) return 0;
    ++digits;
  }
  if (digits == 0) return 0;
  const std::string suffix = text.substr(digits);
  int shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else if (!suffix.empty()) {
    return 0;
  }
  if (value > (kMaxInput >> shift)) return 0;
  value <<= shift;
  return value < kMinInput ? 0 : value;
}

std::size_t max_input_bytes() {
  const char* env = std::getenv("SIA_MAX_INPUT");
  if (!env || !*env) return kDefaultMaxInput;
  const std::size_t v = parse_input_size(env);
  if (v == 0) {
    throw Error(ExitStatus::config, std::string("SIA_MAX_INPUT: expected a size in bytes, "
                                                "optionally with K, M or G (from 1K to 1024G), "
                                                "got \"") +
                                        env + "\"");
  }
  return v;
}

std::string read_input(const std::string& file) {
  return read_input(file, max_input_bytes());
}

std::string read_input(const std::string& file, std::size_t limit) {
  std::string text;
  if (file == "-") {
    read_fd(STDIN_FILENO, "<stdin>", limit, text);
    return text;
  }
  // Without blocking: opening a FIFO that has no writer would otherwise wait forever.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(ExitStatus::no_input, file + ": cannot open: " + std::strerror(errno));
  try {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) wait_for_writer(fd, file, text);
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    read_fd(fd, file, limit, text);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

}  // namespace sia
