// core/json_limits: nesting and range limits on every JSON sia reads.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/csv.hpp"
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

TEST_CASE("a key named twice is refused, on the fast path and nlohmann's, with its place") {
  // The fast reader declines; nlohmann's parser (with a \u escape, which the fast one does
  // not take on) refuses.
  for (const std::string& text :
       {std::string(R"({"a": 1, "b": [{"c": 1}, {"c": 2, "c": 3}]})"),
        std::string(R"({"a": "\u00e9", "b": [{"c": 1}, {"c": 2, "c": 3}]})")}) {
    INFO(text);
    CHECK(parse_json_bounded(text).is_discarded());
    JsonParse p = parse_json_checked(text);
    CHECK(p.error == "duplicate key \"c\" in b[1]");
    CHECK_FALSE(p.syntax);
  }
  CHECK(parse_json_checked(R"({"a": 1, "a": 1})").error == "duplicate key \"a\"");
  // Equal keys in different objects are not duplicates.
  CHECK(parse_json_checked(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": "\u00e9"}]})").error.empty());
  // In a document, in JSON Lines and in TOML alike: status 65 naming the file.
  auto doc = sia::test::error_of([] {
    parse_documents(
        R"({"apiVersion": "sia/v1", "kind": "JobSpec", "data": {"name": "a", "name": "b"}})",
        "twice.json", {"JobSpec"});
  });
  CHECK(doc.first == 65);
  CHECK(doc.second == "twice.json: duplicate key \"name\" in data");
  auto lines = sia::test::error_of([] {
    parse_documents(
        "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {}}\n"
        "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"kind\": \"X\"}\n",
        "twice.jsonl", {"JobSpec"});
  });
  CHECK(lines.first == 65);
  CHECK(lines.second == "twice.jsonl:2: duplicate key \"kind\"");
  auto toml = sia::test::error_of(
      [] { parse_documents("name = \"a\"\nname = \"b\"\n", "twice.toml", {"JobSpec"}); });
  CHECK(toml.first == 65);
  CHECK(toml.second.rfind("twice.toml:2:", 0) == 0);
}

TEST_CASE("a UTF-8 byte order mark is skipped in JSON, JSON Lines, TOML and CSV") {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string json = R"({"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": []}})";
  for (const char* file : {"a.json", "-"}) {
    INFO(file);
    auto docs = parse_documents(bom + json, file, {"Jobs"});
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].kind == "Jobs");
    auto lines = parse_documents(bom + json + "\n" + json + "\n", file, {"Jobs"});
    CHECK(lines.size() == 2);
  }
  auto toml = parse_documents(bom + "jobs = []\n", "a.toml", {"Jobs"});
  CHECK(toml[0].kind == "Jobs");
  auto from_stdin = parse_documents(bom + "jobs = []\n", "-", {"Jobs"});
  CHECK(from_stdin[0].kind == "Jobs");
  CsvTable t(bom + "name,time\na,1\n", "a.csv", ExitStatus::data);
  CHECK(t.column("name") == 0);
  CHECK(parse_json_bounded(bom + "{\"a\": 1}")["a"] == 1);
  CHECK(skip_bom(bom) == "");
  CHECK(skip_bom("\xEF\xBB") == "\xEF\xBB");
}
