#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/json_cursor.hpp"
#include "test_util.hpp"

using namespace sia;
using nlohmann::json;

namespace {
// The same value with the same number kinds (CBOR tells an integer from a float, -0.0
// from 0.0 and keeps every bit of a double).
bool identical(const json& a, const json& b) {
  return json::to_cbor(a) == json::to_cbor(b);
}
}  // namespace

TEST_CASE("parse_json_fast reads JSON as nlohmann does", "[json-cursor]") {
  const std::vector<std::string> texts = {
      "{}",
      "[]",
      " \t\r\n{ \"a\" : [ 1 , -2 , 3.5 , -0 , -0.0 , 0 , 1e2 , 1E-2 , 2.5e+3 ] } \n",
      R"({"b":true,"a":false,"c":null,"d":"x\"\\\/\b\f\n\r\ty"})",
      "[9223372036854775807,-9223372036854775808,18446744073709551615]",
      "[9223372036854775808,-9223372036854775809,18446744073709551616]",  // past int64/uint64
      "[0.1,0.30000000000000004,1.7976931348623157e308,5e-324,123456789012345678901234567890]",
      "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \x7f\"",
      "[[[[[[[[[[1]]]]]]]]]]",
      "3",
      "\"\"",
  };
  for (const auto& text : texts) {
    INFO(text);
    auto fast = parse_json_fast(text);
    REQUIRE(fast);
    CHECK(identical(*fast, json::parse(text)));
  }
  // A real document: sia-estimate's output and a catalog model.
  for (const std::string& path :
       {test::source_dir() + "/tests/golden/sia-estimate/example-json/stdout",
        test::catalog_dir() + "/bert.json"}) {
    const std::string text = read_input(path);
    auto fast = parse_json_fast(text);
    REQUIRE(fast);
    CHECK(identical(*fast, json::parse(text)));
  }
}

TEST_CASE("parse_json_fast declines what it does not take on", "[json-cursor]") {
  const std::vector<std::string> declined = {
      "", "   ",
      "\xef\xbb\xbf{}",                             // a byte order mark (nlohmann skips it)
      R"({"a":1,"a":[2]})",                         // a key twice (sia refuses it)
      "[\"\\u00e9\"]",                              // \u escapes
      "{\"\\u0061\":1}",                            // an escape in a key
      "[1e-400]",                                   // underflow (nlohmann reads 0)
      std::string(70, '[') + std::string(70, ']'),  // deeper than kMaxJsonDepth
      // Not JSON at all:
      "[1e400]", "{\"a\":1}{}", "{\"a\":1", "[1,]", "{\"a\" 1}", "[01]", "[1.]", "[.5]", "[+1]",
      "[-]", "[1e]", "[tru]", "[nul]", "[\"a\x01\"]", "[\"\\x\"]", "[\"a", "{'a':1}",
      "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xe2\x82\"]",
      "[\"\x80\"]", "{\"a\":1}\n{\"b\":2}"};
  for (const auto& text : declined) {
    INFO(text);
    CHECK_FALSE(parse_json_fast(text));
  }
  // What it declines, parse_documents still reads nlohmann's way, messages and all.
  auto e = test::error_of([] { parse_documents("{\"a\":1", "x.json", {"Cluster"}); });
  CHECK(e.second ==
        "x.json: invalid JSON: parse error at line 1, column 7: syntax error while parsing "
        "object - unexpected end of input; expected '}'");
  CHECK(parse_documents(
            "{\"apiVersion\":\"sia/v1\",\"kind\":\"Cluster\",\"data\":{\"x\":\"\\u0041\"}}",
            "x.json", {"Cluster"})
            .front()
            .data()
            .at("x")
            .as_string() == "A");
}

TEST_CASE("a JsonCursor reads values one at a time", "[json-cursor]") {
  JsonCursor c(R"({"n":-7,"u":7,"f":7.5,"s":"x","list":[true,null],"skip":{"a":[1,{"b":2}]}})");
  std::vector<std::string> keys;
  c.object([&](std::string_view k) {
    keys.emplace_back(k);
    if (k == "n") {
      CHECK(c.number().as_int() == -7);
    } else if (k == "u") {
      CHECK(c.number().kind == JsonCursor::Number::unsigned_integer);
    } else if (k == "f") {
      auto n = c.number();
      CHECK(n.as_double() == 7.5);
      CHECK_THROWS_AS(n.as_int(), JsonCursor::Decline);
    } else if (k == "s") {
      CHECK(c.string() == "x");
    } else if (k == "list") {
      std::vector<bool> nulls;
      c.array([&] { nulls.push_back(c.null() || !c.boolean()); });
      CHECK(nulls == std::vector<bool>{false, true});
    } else {
      CHECK(c.skip() == R"({"a":[1,{"b":2}]})");
    }
  });
  CHECK(c.at_end());
  CHECK(keys == std::vector<std::string>{"n", "u", "f", "s", "list", "skip"});
  JsonCursor twice(R"({"a":1,"a":2})");
  CHECK_THROWS_AS(twice.object([&](std::string_view) { twice.skip(); }), JsonCursor::Decline);
}
