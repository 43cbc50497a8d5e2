#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/batch_setting.hpp"
#include "core/node.hpp"
#include "test_util.hpp"

using namespace sia;
using sia::test::error_of;

namespace {

BatchSetting read(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  return parse_batch_setting(Node(j, "p.json", "jobs[0]"));
}

}  // namespace

TEST_CASE("a batch setting keeps global = local x replicas x micro-steps", "[batch]") {
  const BatchSetting b = batch_of(16, 3, 1);
  CHECK(b == BatchSetting{96, 16, 1});
  CHECK(b.micro_steps() == 2);
  CHECK(batch_mismatch(b, 3).empty());
  CHECK(batch_mismatch(b, 2) ==
        "batch_size 96 is not local_bsz 16 x 2 replicas x (accum_steps 1 + 1) = 64");
  CHECK(BatchSetting{}.empty());
  CHECK_FALSE(b.empty());
}

TEST_CASE("a product over the limit is refused, never wrapped", "[batch]") {
  CHECK(batch_product(2147483647, 65536, kMaxAccumSteps) == std::nullopt);
  CHECK(batch_product(-1, 2, 0) == std::nullopt);
  CHECK(batch_product(std::int64_t{1} << 20, std::int64_t{1} << 20, 0) == kMaxGlobalBatch);
  CHECK(batch_product(std::int64_t{1} << 20, (std::int64_t{1} << 20) + 1, 0) == std::nullopt);
  CHECK(error_of([] { batch_of(2147483647, 65536, 1 << 20); }) ==
        std::pair<int, std::string>{65,
                                    "batch: local_bsz 2147483647 x 65536 replicas x "
                                    "(accum_steps 1048576 + 1) is not from 0 to "
                                    "1099511627776"});
  CHECK(batch_mismatch({0, 2147483647, 1 << 20}, 65536) ==
        "local_bsz 2147483647 x 65536 replicas x (accum_steps 1048576 + 1) is not from 0 to "
        "1099511627776");
}

TEST_CASE("a batch setting round-trips through its wire fields", "[batch]") {
  nlohmann::json obj = nlohmann::json::object();
  put_batch_setting(obj, {96, 16, 2});
  // batch_size is written as a float, as every document has since sia/v1.
  CHECK(obj.dump() == R"({"accum_steps":2,"batch_size":96.0,"local_bsz":16})");
  CHECK(read(obj.dump()) == BatchSetting{96, 16, 2});
  CHECK(read(R"({"batch_size":96,"local_bsz":16,"accum_steps":2})") == BatchSetting{96, 16, 2});
  CHECK(read("{}") == BatchSetting{});  // every field optional
  CHECK(global_batch_of(96.0) == 96);
  CHECK(global_batch_of(96.5) == std::nullopt);
  CHECK(global_batch_of(-1) == std::nullopt);
  CHECK(batch_change({64, 16, 1}, {128, 32, 1}) == "batch_size 64 -> 128; local_bsz 16 -> 32");
  CHECK(batch_change({64, 16, 1}, {64, 16, 1}).empty());
}

TEST_CASE("bad wire values name the field", "[batch]") {
  using R = std::pair<int, std::string>;
  CHECK(error_of([] { read(R"({"batch_size":96.5})"); }) ==
        R{65,
          "p.json: jobs[0].batch_size: expected a whole number of samples from 0 to "
          "1099511627776, got the number 96.5"});
  CHECK(error_of([] {
          read(R"({"batch_size":"96"})");
        }).second.find("p.json: jobs[0].batch_size: expected") == 0);
  CHECK(error_of([] {
          read(R"({"local_bsz":-1})");
        }).second.find("p.json: jobs[0].local_bsz: expected") == 0);
  CHECK(error_of([] { read(R"({"accum_steps":1048577})"); }) ==
        R{65,
          "p.json: jobs[0].accum_steps: expected an integer from 0 to 1048576, got the "
          "number 1048577"});
}
