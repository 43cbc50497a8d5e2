// What every sia program shares around its flag parsing: running the body with the
// library's errors mapped to exit statuses and one "<program>: error: <message>" line on
// stderr, quiet exit on a closed stdout (a reader that went away is not an error), the
// output formats, terminal detection and the build information behind --version.
// Thread-safety: process-wide helpers; call from the main thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace sia::cli {

enum class Format { json, jsonl, table, csv };  // csv: where a program says so

// Runs `body`; returns its status, or maps a thrown sia::Error / other exception. Names the
// program for library log lines (core/log.hpp) first.
int run(const char* program, const std::function<int()>& body);

// Writes all of `text` to stdout; on EPIPE exits the process with status 0.
void write_stdout(std::string_view text);
void write_stderr(std::string_view text);

bool stdout_is_tty();
bool stderr_is_tty();
bool use_color();  // stdout is a terminal and NO_COLOR is unset

// Verbosity: -q => -1, default 0, -v => 1, -vv => 2 (the library log's, core/log.hpp).
void set_verbosity(int level);
int verbosity();
void info(std::string_view program, std::string_view message);   // shown unless -q
void debug(std::string_view program, std::string_view message);  // shown with -v

// --version: "sia-estimate 0.1.0" or, for -o json, a document with the versions of GLPK,
// ZeroMQ, CUDA and NCCL this build uses.
std::string version_text(const char* program, Format format);

// Prints a document (pretty on a terminal) followed by a newline.
void print_document(std::string_view kind, const nlohmann::json& metadata,
                    const nlohmann::json& data);

}  // namespace sia::cli
