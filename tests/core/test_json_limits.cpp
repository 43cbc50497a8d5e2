// core/json_limits: nesting and range limits on every JSON sia reads.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/document.hpp"
#include "core/json_limits.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

std::string nested(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

}  // namespace

TEST_CASE("nesting is counted outside strings and refused past the limit") {
  CHECK(json_depth_ok(nested(kMaxJsonDepth)));
  CHECK_FALSE(json_depth_ok(nested(kMaxJsonDepth + 1)));
  CHECK(json_depth_ok("{\"a\": \"" + std::string(1000, '[') + "\"}"));
  CHECK(json_depth_ok(R"({"a": "\"[[[[", "b": [1]})", 2));
  CHECK_FALSE(json_depth_ok(R"({"a": [{"b": 1}]})", 2));
}

TEST_CASE("a bounded parse discards what is too deep, not JSON, or out of range") {
  CHECK(parse_json_bounded(R"({"step": 3})")["step"] == 3);
  CHECK(parse_json_bounded(nested(100000)).is_discarded());
  CHECK(parse_json_bounded("{\"report\": " + nested(200) + "}").is_discarded());
  CHECK(parse_json_bounded("{not json").is_discarded());
  CHECK(parse_json_bounded(R"({"x": 1e400})").is_discarded());
}

TEST_CASE("a document nested too deeply is bad data naming the file") {
  auto e = sia::test::error_of([] {
    parse_documents("{\"kind\": \"Jobs\", \"data\": " + nested(100000) + "}", "deep.json", {"Jobs"},
                    ExitStatus::data);
  });
  CHECK(e.first == 65);
  CHECK(e.second.find("deep.json") != std::string::npos);
  CHECK(e.second.find("nested more than 64 levels deep") != std::string::npos);
}

TEST_CASE("TOML is held to the same nesting limit; 1e400 is bad data in TOML and JSON") {
  auto toml = [](int depth) { return "a = " + nested(depth) + "\n"; };
  // The top table is one level, as a JSON document's object is.
  CHECK_NOTHROW(parse_documents(toml(kMaxJsonDepth - 1), "ok.toml", {"JobSpec"}));
  auto deep = sia::test::error_of(
      [&] { parse_documents(toml(kMaxJsonDepth), "deep.toml", {"JobSpec"}, ExitStatus::config); });
  CHECK(deep.first == 78);
  CHECK(deep.second == "deep.toml: invalid TOML: nested more than 64 levels deep");
  for (const auto& [text, file] : std::vector<std::pair<std::string, std::string>>{
           {"name = \"a\"\nx = 1e400\n", "big.toml"},
           {R"({"apiVersion": "sia/v1", "kind": "JobSpec", "data": {"x": -1e400}})", "big.json"},
           {"{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {}}\n{\"x\": 1e400}\n",
            "big.jsonl"}}) {
    auto e = sia::test::error_of([&] { parse_documents(text, file, {"JobSpec"}); });
    CHECK(e.first == 65);
    CHECK(e.second.rfind(file, 0) == 0);
  }
}
