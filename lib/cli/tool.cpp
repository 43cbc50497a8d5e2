#include "cli/tool.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>

#include <glpk.h>
#include <zmq.h>
#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

#ifndef SIA_VERSION
#define SIA_VERSION "0.0.0"
#endif

namespace sia::cli {

void set_verbosity(int level) {
  log::set_verbosity(level);
}
int verbosity() {
  return log::verbosity();
}

static void write_fd(int fd, std::string_view text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE && fd == 1) std::_Exit(0);
      if (fd == 1) throw Error(ExitStatus::io, std::string("stdout: ") + std::strerror(errno));
      return;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void write_stdout(std::string_view text) {
  write_fd(1, text);
}
void write_stderr(std::string_view text) {
  write_fd(2, text);
}

bool stdout_is_tty() {
  return ::isatty(1) == 1;
}
bool stderr_is_tty() {
  return ::isatty(2) == 1;
}
bool use_color() {
  const char* nc = std::getenv("NO_COLOR");
  return stdout_is_tty() && !(nc && *nc);
}

void info(std::string_view program, std::string_view message) {
  if (verbosity() < 0) return;
  write_stderr(std::string(program) + ": " + std::string(message) + "\n");
}

void debug(std::string_view program, std::string_view message) {
  if (verbosity() < 1) return;
  write_stderr(std::string(program) + ": " + std::string(message) + "\n");
}

int run(const char* program, const std::function<int()>& body) {
  std::signal(SIGPIPE, SIG_IGN);
  log::set_program(program);
  try {
    return body();
  } catch (const Error& e) {
    // One "program: error: " line per problem (a document's several mistakes).
    const std::string prefix = std::string(program) + ": error: ";
    std::string text = prefix;
    for (const char* c = e.what(); *c; ++c) {
      text += *c;
      if (*c == '\n' && c[1]) text += prefix;
    }
    write_stderr(text + "\n");
    return to_int(e.status());
  } catch (const std::bad_alloc&) {
    write_stderr(std::string(program) + ": error: out of memory\n");
    return to_int(ExitStatus::software);
  } catch (const std::exception& e) {
    write_stderr(std::string(program) + ": internal error: " + e.what() +
                 " (please report this as a bug)\n");
    return to_int(ExitStatus::software);
  }
}

std::string version_text(const char* program, Format format) {
  if (format == Format::table) return std::string(program) + " " + SIA_VERSION + "\n";
  int major = 0, minor = 0, patch = 0;
  zmq_version(&major, &minor, &patch);
  nlohmann::json data;
  data["program"] = program;
  data["version"] = SIA_VERSION;
  data["glpk"] = glp_version();
  data["zeromq"] =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
#ifdef SIA_CUDA_VERSION
  data["cuda"] = SIA_CUDA_VERSION;
#else
  data["cuda"] = nullptr;
#endif
#ifdef SIA_NCCL_VERSION
  data["nccl"] = SIA_NCCL_VERSION;
#else
  data["nccl"] = nullptr;
#endif
  return dump_document("BuildInfo", nlohmann::json::object(), data, false) + "\n";
}

void print_document(std::string_view kind, const nlohmann::json& metadata,
                    const nlohmann::json& data) {
  write_stdout(dump_document(kind, metadata, data, stdout_is_tty()) + "\n");
}

}  // namespace sia::cli
