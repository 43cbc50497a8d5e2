#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/goodput_matrix_reader.hpp"
#include "test_util.hpp"

using namespace sia;
using sia::test::error_of;

namespace {

// The tree reader's way: what sia-solve did before the fast reader.
GoodputMatrix tree_read(const std::string& text, const std::string& file = "m.json") {
  return parse_goodput_matrix(parse_document(text, file, {"GoodputMatrix"}).data());
}

std::string written(const GoodputMatrix& m, bool pretty = false) {
  return goodput_matrix_document(m, nlohmann::json::object(), pretty);
}

// A matrix with every field the format has, set away from its default.
GoodputMatrix full_matrix() {
  GoodputMatrix m;
  m.cluster = parse_cluster(Node(nlohmann::json::parse(R"({"name":"c","node_groups":[
             {"gpu_type":"t4","count":2,"gpus_per_node":4,"name_prefix":"t4-"},
             {"gpu_type":"a100","count":1,"gpus_per_node":8,"name_prefix":"a-"}]})"),
                                 "c.json", ""));
  m.profile = "reference";
  GoodputRow r;
  r.job = "b\t\"job\"\\";
  r.adaptivity = Adaptivity::strong_scaling;
  r.priority = -3;
  r.age = 12.5;
  r.restarts = 2;
  r.restart_penalty = 45;
  r.attained_service = 1e20;
  r.preemptible = false;
  r.restoring = true;
  r.current = Config{1, 1, 8};
  r.min_gpus = 2;
  r.max_gpus = 16;
  r.normalizer = 0.0731;
  r.fixed_gpus = 4;
  r.fixed_batch = 256;
  r.model.types.resize(2);
  r.model.types[1] = TypeModelInfo{true, {0.1, 0.2, 3e-9, 4, 5, 6, 1.25}, 2, 64, 2, 8};
  r.model.blind_known = true;
  r.model.blind_params = {1, 2, 3, 4, 5, 6, 7};
  r.model.blind_min_local = 3;
  r.model.blind_max_local = 9;
  r.model.gradient = GradientStats{43032304393.29889, 0.5};
  r.model.init_batch_size = 12;
  r.model.max_batch_size = 384;
  r.model.max_observed_replicas = 5;
  r.progress = JobProgress{10, 14774};
  r.app = AppRef{"search", 9, 3, 3, 1, 1, 2};
  for (double g : {1.0, 1.75, 0.0001, 123456789.125, 3e-9, 1e20}) {
    GoodputEntry e;
    e.config = Config{0, 2, 5};
    e.goodput = g;
    e.raw_goodput = g * 3;
    e.throughput = g / 7;
    e.batch = {128, 32, 1};
    e.source = GoodputSource::bootstrap;
    r.entries.push_back(e);
  }
  r.fixed = {r.entries[1]};
  r.fixed[0].source = GoodputSource::fallback;
  GoodputRow a;  // the rows in name order, as every reader leaves them
  a.job = "a";
  a.model.types.resize(2);
  m.jobs.push_back(a);
  m.jobs.push_back(r);
  m.order = {"b\t\"job\"\\", "a"};
  return m;
}

std::string read_text(const std::string& path) {
  return read_input(path);
}

// `text` with the first `from` replaced by `to`.
std::string with(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the fast GoodputMatrix reader reads back what the writer wrote", "[goodput-reader]") {
  const GoodputMatrix m = full_matrix();
  for (bool pretty : {false, true}) {
    const std::string doc = written(m, pretty);
    auto fast = parse_goodput_matrix_fast(doc);
    REQUIRE(fast);
    CHECK(written(*fast, pretty) == doc);
    CHECK(written(*fast) == written(tree_read(doc)));
    CHECK(fast->order == m.order);
    CHECK(fast->jobs.back().app->bracket == 1);
    CHECK(fast->jobs.back().model.types[1].known);
    CHECK_FALSE(fast->jobs.back().model.types[0].known);
  }
}

TEST_CASE("the fast reader gives the tree reader's matrix on sia-estimate's output",
          "[goodput-reader]") {
  const std::string doc =
      read_text(test::source_dir() + "/tests/golden/sia-estimate/example-json/stdout");
  auto fast = parse_goodput_matrix_fast(doc);
  REQUIRE(fast);
  REQUIRE(fast->jobs.size() > 1);
  const GoodputMatrix tree = tree_read(doc);
  // The document written again is the input, byte for byte, either way it was read.
  const auto meta = nlohmann::json::parse(doc)["metadata"];
  CHECK(goodput_matrix_document(*fast, meta, false) + "\n" == doc);
  CHECK(written(*fast) == written(tree));
  CHECK(written(*fast, true) == written(tree, true));
}

TEST_CASE("what the fast reader leaves to the tree reader reads the same", "[goodput-reader]") {
  const std::string doc = written(full_matrix());
  // Not taken on by the fast reader, but good input all the same.
  const std::vector<std::string> others = {
      with(doc, "\"name\":\"a\"", "\"name\":\"\\u0061\""),                           // a \u escape
      with(doc, "\"profile\":\"reference\"", "\"profile\":null,\"profile\":\"x\""),  // twice
      with(doc, "{\"apiVersion\"", "\xef\xbb\xbf{\"apiVersion\""),  // a byte order mark
      with(doc, "\"goodput\":1.0,", "\"goodput\":1e-400,"),         // underflow
      with(doc, "\"cluster\":{", "\"jobs\":[],\"x\":{"),            // jobs before the cluster
      "{\"apiVersion\":\"sia/v1\",\"kind\":\"GoodputMatrix\",\"data\":{\"jobs\":[],"
      "\"cluster\":" +
          nlohmann::json::parse(doc)["data"]["cluster"].dump() + "}}",
  };
  for (const auto& text : others) {
    INFO(text.substr(0, 200));
    CHECK_FALSE(parse_goodput_matrix_fast(text));
    try {
      const GoodputMatrix tree = tree_read(text);
      CHECK(written(parse_goodput_matrix_text(text, "m.json")) == written(tree));
    } catch (const Error& e) {
      CHECK(error_of([&] { parse_goodput_matrix_text(text, "m.json"); }).second == e.what());
    }
  }
  // Accepted values the fast reader takes on itself: nulls as absent, unknown keys, other
  // key orders, integers written as floats, other white space.
  const std::vector<std::string> taken = {
      with(doc, "\"name\":\"a\"", "\"name\":\"\xc3\xa9\xf0\x9f\x99\x82\x7f\""),  // UTF-8
      with(doc, "\"fixed_batch\":256.0", "\"fixed_batch\":null,\"unknown\":[{\"x\":[1,{}]}]"),
      with(doc, "\"gpus\":5,\"local_bsz\":32", "\"local_bsz\":32,\"gpus\":5.0"),
      with(doc, "\"restarts\":2", "\"restarts\" :\r\n\t2.0"),
      with(doc, "\"priority\":-3", "\"priority\":-3e0"),
      with(doc, "\"metadata\":{}", "\"metadata\":{\"a\":[true,false,null,-0.5e+3,\"x\\/y\"]}"),
  };
  for (const auto& text : taken) {
    INFO(text.substr(0, 200));
    auto fast = parse_goodput_matrix_fast(text);
    REQUIRE(fast);
    CHECK(written(*fast) == written(tree_read(text)));
  }
}

TEST_CASE("bad GoodputMatrix input gets the tree reader's message", "[goodput-reader]") {
  const std::string doc = written(full_matrix());
  struct Case {
    std::string text;
    std::string message;  // "" : whatever the tree reader says
  };
  const std::vector<Case> cases = {
      {"", "m.json: empty input, expected a sia document"},
      {"{\"apiVersion\": ",
       "m.json: invalid JSON: parse error at line 1, column 16: syntax error while parsing value "
       "- unexpected end of input; expected '[', '{', or a literal"},
      {with(doc, "\"kind\":\"GoodputMatrix\"", "\"kind\":\"Allocation\""),
       "m.json: kind: expected a document of kind GoodputMatrix, got kind \"Allocation\""},
      {with(doc, "\"apiVersion\":\"sia/v1\"", "\"apiVersion\":\"sia/v2\""), ""},
      {with(doc, "\"gpus\":5,", "\"gpus\":50,"),
       "m.json: jobs[1].entries[0].gpus: 50 GPUs do not fit on 2 node(s) of 4"},
      {with(doc, "\"gpus\":5,", "\"gpus\":1,"),
       "m.json: jobs[1].entries[0].gpus: expected at least one GPU per node, got the number 1"},
      {with(doc, "\"nodes\":2,\"raw_goodput\"", "\"nodes\":3,\"raw_goodput\""), ""},
      {with(doc, "\"gpu_type\":\"t4\",\"gpus\":5", "\"gpu_type\":\"v100\",\"gpus\":5"),
       "m.json: jobs[1].entries[0].gpu_type: unknown GPU type \"v100\" (cluster has t4, a100)"},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":-1.0,"), ""},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":null,"), ""},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":1e400,"), ""},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":\"1\","), ""},
      {with(doc, "\"goodput\":1.0,", ""), ""},
      {with(doc, "\"batch_size\":128.0", "\"batch_size\":128.5"), ""},
      {with(doc, "\"batch_size\":128.0", "\"batch_size\":-128"), ""},
      {with(doc, "\"accum_steps\":1", "\"accum_steps\":-1"), ""},
      {with(doc, "\"local_bsz\":32", "\"local_bsz\":-32"), ""},
      {with(doc, "\"source\":\"bootstrap\"", "\"source\":\"guess\""), ""},
      {with(doc, "\"adaptivity\":\"strong-scaling\"", "\"adaptivity\":\"elastic\""), ""},
      {with(doc, "\"name\":\"a\"", "\"name\":\"b\\t\\\"job\\\"\\\\\""), ""},  // a duplicate
      {with(doc, "\"name\":\"a\"", "\"name\":7"), ""},
      {with(doc, "\"age\":12.5", "\"age\":-12.5"), ""},
      {with(doc, "\"restarts\":2", "\"restarts\":2.5"), ""},
      {with(doc, "\"restarts\":2", "\"restarts\":4294967296"), ""},
      {with(doc, "\"priority\":-3", "\"priority\":18446744073709551616"), ""},
      {with(doc, "\"min_gpus\":2", "\"min_gpus\":0"), ""},
      {with(doc, "\"preemptible\":false", "\"preemptible\":0"), ""},
      {with(doc, "\"current\":{", "\"current\":[{"), ""},
      {with(doc, "\"done\":10.0", "\"done\":null"), ""},
      {with(doc, "\"grad_var\":0.5", "\"grad_var\":-0.5"), ""},
      {with(doc, "\"params\":[1.0,2.0,3.0,4.0,5.0,6.0,7.0]", "\"params\":[1.0]"), ""},
      {with(doc, "\"phase\":1", "\"phase\":3"), ""},
      {with(doc, "\"entries\":[", "\"entries\":null,\"x\":["), ""},
      {with(doc, "\"order\":[", "\"order\":[1,"), ""},
      {with(doc, "\"profile\":\"reference\"", "\"profile\":false"), ""},
      {with(doc, "\"node_groups\":[", "\"node_groups\":7,\"x\":["), ""},
      {with(doc, "\"cluster\":{", "\"x\":{"), ""},
      {with(doc, "\"data\":{", "\"data\":[{"), ""},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":01,"), ""},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":1.,"), ""},
      {with(doc, "\"goodput\":1.0,", "\"goodput\":tru,"), ""},
      {with(doc, "\"name\":\"a\"", "\"name\":\"a\x01\""), ""},
      {with(doc, "\"name\":\"a\"", "\"name\":\"\xc0\xaf\""), ""},          // overlong
      {with(doc, "\"name\":\"a\"", "\"name\":\"\xed\xa0\x80\""), ""},      // a surrogate
      {with(doc, "\"name\":\"a\"", "\"name\":\"\xf4\x90\x80\x80\""), ""},  // > U+10FFFF
      {with(doc, "\"name\":\"a\"", "\"name\":\"\xe2\x82\""), ""},          // cut short
      {doc + "{}", ""},
      {doc + "\n" + doc, ""},
      {std::string(70, '[') + std::string(70, ']'), ""},
  };
  for (const auto& c : cases) {
    INFO(c.text.substr(0, 300));
    CHECK_FALSE(parse_goodput_matrix_fast(c.text));
    auto fast = error_of([&] { parse_goodput_matrix_text(c.text, "m.json"); });
    auto tree = error_of([&] { tree_read(c.text); });
    CHECK(tree.first == 65);
    CHECK(fast == tree);
    if (!c.message.empty()) CHECK(fast.second == c.message);
  }
}
