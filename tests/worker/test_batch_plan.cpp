#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "worker/batch_plan.hpp"

using namespace sia::worker;
namespace fs = std::filesystem;

namespace {

std::optional<BatchPlan> parse(const std::string& text,
                               std::vector<std::string>* warnings = nullptr) {
  return parse_batch_plan(text, 7, 2, [&](const std::string& w) {
    if (warnings) warnings->push_back(w);
  });
}

void write(const fs::path& p, const std::string& text) {
  fs::path tmp = p.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, p);  // as sia-run does: a new file, renamed over the old one
}

}  // namespace

TEST_CASE("a batch plan is read only when complete, of this round and consistent",
          "[worker][batch_plan]") {
  auto p = parse(R"({"type":"batch_plan","job":"j","round":7,"plan":2,"batch_size":96,)"
                 R"("local_bsz":16,"accum_steps":2})");
  REQUIRE(p);
  CHECK(p->plan == 2);
  CHECK(p->batch.global == 96);
  CHECK(p->batch.local == 16);
  CHECK(p->batch.accum_steps == 2);
  CHECK(parse(R"({"type":"batch_plan","round":7,"plan":2,"batch_size":96.0,"local_bsz":16,)"
              R"("accum_steps":2})"));  // a float batch size that is integral

  CHECK_FALSE(parse(""));
  CHECK_FALSE(parse("{\"type\":\"batch_plan\",\"round\":7,"));  // torn
  CHECK_FALSE(parse("[1,2]"));
  CHECK_FALSE(parse(R"({"type":"report","round":7,"plan":2,"batch_size":96,"local_bsz":16,)"
                    R"("accum_steps":2})"));
  CHECK_FALSE(parse(R"({"type":"batch_plan","round":6,"plan":2,"batch_size":96,"local_bsz":16,)"
                    R"("accum_steps":2})"));  // another generation's
  CHECK_FALSE(parse(R"({"type":"batch_plan","round":7,"plan":0,"batch_size":96,"local_bsz":16,)"
                    R"("accum_steps":2})"));
  CHECK_FALSE(parse(R"({"type":"batch_plan","round":7,"plan":2,"batch_size":96,"local_bsz":0,)"
                    R"("accum_steps":2})"));
  CHECK_FALSE(parse(R"({"type":"batch_plan","round":7,"plan":2,"batch_size":96,"local_bsz":16,)"
                    R"("accum_steps":-1})"));
  CHECK_FALSE(parse(R"({"type":"batch_plan","round":7,"plan":2,"batch_size":96,)"
                    R"("local_bsz":2147483647,"accum_steps":1048576})"));  // no overflow
  std::vector<std::string> w;
  CHECK_FALSE(parse(R"({"type":"batch_plan","round":7,"plan":3,"batch_size":100,)"
                    R"("local_bsz":16,"accum_steps":2})",
                    &w));  // 16 x 2 x 3 = 96
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("batch plan 3 ignored") != std::string::npos);
}

TEST_CASE("the watcher returns each newer plan once", "[worker][batch_plan]") {
  char tmpl[] = "/tmp/sia-plan-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::path file = dir / "batch-plan.json";
  BatchPlanWatcher w(file.string(), 7, 2, nullptr);
  CHECK_FALSE(w.poll());  // no file yet
  write(file, R"({"type":"batch_plan","round":7,"plan":1,"batch_size":32,"local_bsz":16,)"
              R"("accum_steps":0})");
  auto p = w.poll();
  REQUIRE(p);
  CHECK(p->plan == 1);
  w.set_applied(1);
  CHECK_FALSE(w.poll());  // unchanged file: not read again
  write(file, R"({"type":"batch_plan","round":7,"plan":1,"batch_size":32,"local_bsz":16,)"
              R"("accum_steps":0})");
  CHECK_FALSE(w.poll());  // rewritten, but not newer
  write(file, R"({"type":"batch_plan","round":7,"plan":2,"batch_size":64,"local_bsz":16,)"
              R"("accum_steps":1})");
  p = w.poll();
  REQUIRE(p);
  CHECK(p->plan == 2);
  CHECK(p->batch.global == 64);
  BatchPlanWatcher none("", 7, 2, nullptr);
  CHECK_FALSE(none.poll());
  fs::remove_all(dir);
}
