// Helpers shared by the unit tests: paths to the project's data and parsing from strings.
#pragma once

#include <string>

#include "core/document.hpp"

namespace sia::test {

inline std::string source_dir() {
  return SIA_TEST_SOURCE_DIR;
}
inline std::string data_dir() {
  return source_dir() + "/data";
}
inline std::string catalog_dir() {
  return data_dir() + "/models";
}

inline Document doc_from(const std::string& text, const std::string& kind,
                         const std::string& file = "test.json") {
  return parse_documents(text, file, {kind}).front();
}

}  // namespace sia::test

#include <functional>
#include <utility>

#include "core/error.hpp"

namespace sia::test {

// Runs `fn`, which must throw sia::Error; returns its status and message.
inline std::pair<int, std::string> error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {to_int(e.status()), e.what()};
  }
  return {0, "(no error)"};
}

}  // namespace sia::test
