#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "test_util.hpp"

using namespace sia;
using sia::test::error_of;

TEST_CASE("an envelope is read and its kind and version checked", "[document]") {
  auto d = test::doc_from(R"({"apiVersion":"sia/v1","kind":"Cluster","data":{"x":1}})", "Cluster");
  CHECK(d.kind == "Cluster");
  CHECK(d.data().at("x").as_int() == 1);
  CHECK(d.metadata().keys().empty());

  auto wrong_kind = error_of([] {
    test::doc_from(R"({"apiVersion":"sia/v1","kind":"Profile","data":{}})", "Cluster", "c.json");
  });
  CHECK(wrong_kind.first == 65);
  CHECK(wrong_kind.second ==
        "c.json: kind: expected a document of kind Cluster, got kind \"Profile\"");

  auto v2 = error_of([] {
    test::doc_from(R"({"apiVersion":"sia/v2","kind":"Cluster","data":{}})", "Cluster", "c.json");
  });
  CHECK(v2.first == 65);
  CHECK(v2.second ==
        "c.json: apiVersion: unsupported apiVersion \"sia/v2\" (this build reads sia/v1)");
  // Minor revisions of v1 are accepted.
  CHECK_NOTHROW(
      test::doc_from(R"({"apiVersion":"sia/v1.3","kind":"Cluster","data":{}})", "Cluster"));
  CHECK_NOTHROW(
      test::doc_from(R"({"apiVersion":"sia/v1beta1","kind":"Cluster","data":{}})", "Cluster"));
  CHECK(error_of([] {
          test::doc_from(R"({"apiVersion":"sia/v10","kind":"Cluster","data":{}})", "Cluster");
        }).first == 65);
}

TEST_CASE("invalid JSON names the file and position", "[document]") {
  auto e = error_of([] { test::doc_from("{\"apiVersion\": ", "Cluster", "bad.json"); });
  CHECK(e.first == 65);
  CHECK(e.second.rfind("bad.json: invalid JSON: parse error at line 1, column 16", 0) == 0);
}

// Found by fuzz/document and fuzz/node_outputs: an empty text (a node command that printed
// nothing) threw std::out_of_range from inside the JSON Lines fallback.
TEST_CASE("an empty or blank text is bad data, not an internal error", "[document]") {
  for (std::string text : {"", "\n", " \t\r\n "}) {
    auto e = error_of([&] { parse_documents(text, "out.json", {"RunStatus"}); });
    CHECK(e.first == 65);
    CHECK(e.second == "out.json: empty input, expected a sia document");
  }
}

TEST_CASE("JSON Lines give one document per line, errors cite the line", "[document]") {
  std::string text =
      "{\"apiVersion\":\"sia/v1\",\"kind\":\"JobSpec\",\"data\":{\"name\":\"a\"}}\n\n"
      "{\"apiVersion\":\"sia/v1\",\"kind\":\"JobSpec\",\"data\":{\"name\":\"b\"}}\n";
  auto docs = parse_documents(text, "jobs.jsonl", {"JobSpec"});
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].data().at("name").as_string() == "b");
  CHECK(docs[1].file == "jobs.jsonl:3");
  auto e = error_of([&] { parse_documents(text + "{oops\n", "jobs.jsonl", {"JobSpec"}); });
  CHECK(e.second.rfind("jobs.jsonl:4: invalid JSON", 0) == 0);
}

TEST_CASE("TOML is the data part, with an optional kind", "[document]") {
  auto docs = parse_documents("name = \"x\"\n[[node_groups]]\ngpu_type = \"t4\"\ncount = 2\n",
                              "c.toml", {"Cluster"});
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].kind == "Cluster");
  CHECK(docs[0].data().at("node_groups")[0].at("count").as_int() == 2);
  auto e = error_of([] { parse_documents("name = \n", "c.toml", {"Cluster"}); });
  CHECK(e.first == 65);
  CHECK(e.second.rfind("c.toml:1:", 0) == 0);
}

TEST_CASE("Node accessors say what was expected and where", "[document]") {
  auto d = test::doc_from(
      R"({"apiVersion":"sia/v1","kind":"X","data":{"jobs":[{"n":"s"},{"n":-2,"f":1.5}]}})", "X",
      "g.json");
  Node jobs = d.data().at("jobs");
  CHECK(error_of([&] { jobs[0].at("n").as_int(); }).second ==
        "g.json: jobs[0].n: expected an integer, got the string \"s\"");
  CHECK(error_of([&] { jobs[1].at("n").positive_int(); }).second ==
        "g.json: jobs[1].n: expected a positive integer, got the number -2");
  CHECK(error_of([&] { jobs[1].at("f").as_int(); }).second ==
        "g.json: jobs[1].f: expected an integer, got the number 1.5");
  CHECK(error_of([&] { jobs[1].at("missing"); }).second ==
        "g.json: jobs[1].missing: missing required field");
  // Found by fuzz/document: an index past the end read outside the array.
  CHECK(error_of([&] { jobs[2]; }).second ==
        "g.json: jobs: expected an array of at least 3 elements, got an array");
  CHECK(error_of([&] {
          jobs[0].at("n").one_of({"a", "b"});
        }).second == "g.json: jobs[0].n: expected one of \"a\", \"b\", got the string \"s\"");
}

TEST_CASE("documents are written deterministically and never with NaN", "[document]") {
  nlohmann::json data{{"b", 1}, {"a", {1, 2, 3}}};
  std::string one = dump_document("X", nlohmann::json::object(), data, false);
  CHECK(one == R"({"apiVersion":"sia/v1","kind":"X","metadata":{},"data":{"a":[1,2,3],"b":1}})");
  std::string pretty = dump_document("X", nlohmann::json::object(), data, true);
  CHECK(pretty.find("\"a\": [1,2,3]") != std::string::npos);
  nlohmann::json bad{{"x", std::nan("")}};
  CHECK(error_of([&] { dump_document("X", {}, bad, false); }).first == 70);
}

#include "core/goodput_matrix.hpp"
#include "core/json_writer.hpp"

TEST_CASE("the streaming writer produces the same bytes as dump_document", "[document]") {
  GoodputMatrix m;
  auto docs = parse_documents("[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 2\n",
                              "c.toml", {"Cluster"});
  m.cluster = cluster_from_document(docs.front());
  GoodputRow r;
  r.job = "a\"b";
  r.age = 12.5;
  r.current = Config{0, 1, 2};
  for (double g : {1.0, 1.75, 0.0001, 123456789.125, 3e-9, 1e20}) {
    GoodputEntry e;
    e.config = Config{0, 1, 1};
    e.goodput = g;
    e.raw_goodput = g * 3;
    e.batch.global = 128;
    r.entries.push_back(e);
  }
  m.jobs.push_back(r);
  GoodputRow empty;
  empty.job = "z";
  m.jobs.push_back(empty);
  nlohmann::json meta{{"generator", "test"}};
  for (bool pretty : {false, true}) {
    const std::string doc = goodput_matrix_document(m, meta, pretty);
    CHECK(doc == dump_document("GoodputMatrix", meta, nlohmann::json::parse(doc)["data"], pretty));
  }
  JsonWriter w(false);
  CHECK_THROWS(w.number(std::nan("")));
}
