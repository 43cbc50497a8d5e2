// JsonWriter: a streaming JSON writer for the large documents on the hot path of a round
// (a GoodputMatrix of 10,000+ entries): an order of magnitude faster than building a
// nlohmann::json tree and dumping it. Numbers use nlohmann's own formatting (the shortest
// form that reads back to the same double), so the bytes are the same whichever way a
// document was written. The caller writes keys in sorted order (the project's stable key
// order). Non-finite numbers are refused.
// Thread-safety: one writer per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sia {

class JsonWriter {
 public:
  // pretty: two-space indentation, arrays begun with `inline_array` stay on one line.
  explicit JsonWriter(bool pretty);

  void begin_object();
  void end_object();
  void begin_array(bool inline_array = false);
  void end_array();
  void key(std::string_view k);
  void string(std::string_view s);
  void number(double d);
  void integer(std::int64_t i);
  void boolean(bool b);
  void null();
  void raw(const nlohmann::json& value);  // an already-built value

  std::string& str() { return out_; }

 private:
  void before_value();
  void newline();

  struct Level {
    bool array;
    bool inline_array;
    bool empty;
  };
  bool pretty_;
  bool after_key_ = false;
  std::vector<Level> stack_;
  std::string out_;
};

}  // namespace sia
