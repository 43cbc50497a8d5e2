#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/app_spec.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

AppSpec parse(const std::string& data) {
  nlohmann::json j = nlohmann::json::parse(data);
  return parse_app_spec(Node(j, "sweep.json", ""));
}

}  // namespace

TEST_CASE("an app's grid expands into named trials with their values", "[app]") {
  AppSpec a = parse(R"({"name": "lr", "scheduler": {"kind": "successive-halving", "eta": 2,
    "rungs": 3}, "template": {"model": "cifar10", "command": ["w", "--lr={lr}", "{app}/{trial}"]},
    "hparams": {"grid": {"lr": [0.1, 0.01], "wd": [0, 1]}}})");
  CHECK(a.scheduler.kind == AppSchedulerKind::successive_halving);
  CHECK(a.metric == "loss");
  CHECK(a.minimize);
  auto t = expand_trials(a, "sweep.json");
  REQUIRE(t.size() == 4);
  CHECK(t[0].name == "lr-000");
  CHECK(t[3].name == "lr-003");
  CHECK(t[0].app == "lr");
  CHECK(t[0].hparams.at("lr") == 0.1);
  CHECK(t[1].hparams.at("wd") == 1);
  CHECK(t[2].command == std::vector<std::string>{"w", "--lr=0.01", "lr/002"});
  CHECK(rung_fraction(a.scheduler, 0) == 0.25);
  CHECK(rung_fraction(a.scheduler, 1) == 0.5);
  CHECK(rung_fraction(a.scheduler, 2) == 1.0);
  // Round trip.
  AppSpec b = parse(app_spec_to_json(a).dump());
  CHECK(expand_trials(b, "x").size() == 4);
}

TEST_CASE("a sampled app is the same for the same seed", "[app]") {
  const std::string doc = R"({"name": "s", "template": {"model": "cifar10"},
    "hparams": {"sample": {"seed": 7, "trials": 5, "lr": {"min": 1e-4, "max": 1e-1,
    "scale": "log"}}}})";
  auto x = expand_trials(parse(doc), "f");
  auto y = expand_trials(parse(doc), "f");
  REQUIRE(x.size() == 5);
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(x[i].hparams.at("lr") == y[i].hparams.at("lr"));
    CHECK(x[i].hparams.at("lr") >= 1e-4);
    CHECK(x[i].hparams.at("lr") <= 1e-1);
  }
  CHECK(x[0].hparams.at("lr") != x[1].hparams.at("lr"));
}

TEST_CASE("app errors name the file and the field", "[app]") {
  auto err = [](const std::string& d) { return test::error_of([&] { parse(d); }); };
  CHECK(err(R"({"name": "a", "scheduler": {"kind": "halving"}})")
            .second.find("sweep.json: scheduler.kind") == 0);
  CHECK(err(R"({"name": "a", "template": {"model": "m", "command": ["{nope}"]},
      "hparams": {"grid": {"lr": [1]}}})")
            .second.find("unknown placeholder {nope}") != std::string::npos);
  CHECK(err(R"({"name": "a", "hparams": {"grid": {"lr": [1]}, "sample": {}}})")
            .second.find("exactly one of grid or sample") != std::string::npos);
  CHECK(err(R"({"name": "a", "scheduler": {"eta": 1}})").first == 65);
}
