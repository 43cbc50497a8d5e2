#include "core/log.hpp"

#include <unistd.h>

#include <cerrno>

namespace sia::log {

namespace {

std::string g_program;
int g_verbosity = 0;
Sink g_sink;

void write_stderr(const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(2, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void emit(Level level, std::string_view line) {
  if (g_sink) {
    g_sink(level, line);
    return;
  }
  if (level == Level::info ? g_verbosity < 0 : g_verbosity < 1) return;
  write_stderr((g_program.empty() ? "" : g_program + ": ") + std::string(line) + "\n");
}

}  // namespace

void set_program(std::string_view name) {
  g_program = name;
}
const std::string& program() {
  return g_program;
}

void set_verbosity(int level) {
  g_verbosity = level;
}
int verbosity() {
  return g_verbosity;
}

void set_sink(Sink sink) {
  g_sink = std::move(sink);
}

void info(std::string_view line) {
  emit(Level::info, line);
}
void debug(std::string_view line) {
  emit(Level::debug, line);
}

}  // namespace sia::log
