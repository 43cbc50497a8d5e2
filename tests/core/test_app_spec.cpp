#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/app_spec.hpp"
#include "core/document.hpp"
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

TEST_CASE("hyperband divides the trials among its brackets in Hyperband's proportions", "[app]") {
  AppSpec a = parse(R"({"name": "hb", "scheduler": {"kind": "hyperband", "eta": 3,
    "rungs": 4}})");
  REQUIRE(a.scheduler.kind == AppSchedulerKind::hyperband);
  CHECK(std::string(to_string(a.scheduler.kind)) == "hyperband");
  CHECK(app_brackets(a.scheduler) == 4);
  // Bracket b is successive halving in rungs - b phases from eta^-(rungs-1-b).
  const AppScheduler b0 = bracket_scheduler(a.scheduler, 0);
  CHECK(b0.kind == AppSchedulerKind::successive_halving);
  CHECK(b0.rungs == 4);
  CHECK(rung_fraction(b0, 0) == Approx(1.0 / 27));
  CHECK(bracket_scheduler(a.scheduler, 2).rungs == 2);
  CHECK(rung_fraction(bracket_scheduler(a.scheduler, 2), 0) == Approx(1.0 / 3));
  CHECK(bracket_scheduler(a.scheduler, 3).rungs == 1);  // trains to the end
  auto sizes = [](const AppScheduler& s, int n) {
    std::vector<int> size(static_cast<std::size_t>(app_brackets(s)), 0);
    for (int b : hyperband_brackets(s, n)) ++size.at(static_cast<std::size_t>(b));
    return size;
  };
  // eta 3, s_max 3: n_s = 27, 12, 6, 4 (Li et al.'s Table 1 for R = 27 has 27, 12, 6, 4).
  CHECK(sizes(a.scheduler, 49) == std::vector<int>{27, 12, 6, 4});
  CHECK(sizes(a.scheduler, 4) == std::vector<int>{1, 1, 1, 1});  // at least one each
  CHECK(sizes(a.scheduler, 2) == std::vector<int>{1, 1, 0, 0});  // too few: by remainder
  CHECK(sizes(a.scheduler, 10) == std::vector<int>{6, 2, 1, 1});
  // eta 2, rungs 3 (weights 4, 3, 3).
  const AppScheduler e2{AppSchedulerKind::hyperband, 2, 3};
  CHECK(sizes(e2, 8) == std::vector<int>{3, 3, 2});
  CHECK(sizes(e2, 20) == std::vector<int>{8, 6, 6});
  // Interleaved over the trial order, deterministic.
  CHECK(hyperband_brackets(e2, 8) == std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1});
  CHECK(hyperband_brackets(e2, 8) == hyperband_brackets(e2, 8));
  // Other schedulers: one bracket.
  CHECK(hyperband_brackets({AppSchedulerKind::successive_halving, 2, 3}, 3) ==
        std::vector<int>{0, 0, 0});
  CHECK(app_brackets({}) == 1);
  // Round trip.
  CHECK(parse(app_spec_to_json(a).dump()).scheduler.kind == AppSchedulerKind::hyperband);
}

TEST_CASE("an app with several mistakes reports them all, one a line", "[app]") {
  const auto e = test::error_of([] {
    parse(R"({"name": "a", "direction": "down", "scheduler": {"kind": "halving", "eta": 1},
              "hparams": {"grid": {"lr": []}}})");
  });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "sweep.json: scheduler.kind: expected one of \"none\", \"successive-halving\", "
        "\"hyperband\", got the string \"halving\"\n"
        "sweep.json: scheduler.eta: expected an integer from 2 to 100, got the number 1\n"
        "sweep.json: direction: expected one of \"min\", \"max\", got the string \"down\"\n"
        "sweep.json: hparams.grid.lr: expected a non-empty list of numbers, got an array");
  // A template's mistake is said once, not once per trial.
  const auto t = test::error_of([] {
    parse(R"({"name": "a", "template": {"model": "m", "gpus": 0, "command": ["x"]},
              "hparams": {"grid": {"lr": [1, 2, 3]}}})");
  });
  CHECK(t.second ==
        "sweep.json: template.gpus: expected an integer from 1 to 1000000, got the "
        "number 0");
}

TEST_CASE("a TOML App needs no kind: its template, hparams or scheduler say it", "[app]") {
  const std::string text =
      "name = \"s\"\nmetric = \"loss\"\ndirection = \"min\"\n[scheduler]\n"
      "kind = \"successive-halving\"\n[template]\nmodel = \"cifar10\"\n"
      "command = [\"w\", \"{lr}\"]\n[hparams.grid]\nlr = [0.1, 0.2]\n";
  auto docs = parse_documents(text, "sweep.toml", {"JobSpec", "Jobs", "App"});
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].kind == "App");
  CHECK(expand_trials(parse_app_spec(docs[0].data()), "sweep.toml").size() == 2);
  // A JobSpec stays one (a trial written back has hparams beside its model).
  CHECK(parse_documents("name = \"j\"\nmodel = \"cifar10\"\n[hparams]\nlr = 0.1\n", "j.toml",
                        {"JobSpec", "Jobs", "App"})
            .front()
            .kind == "JobSpec");
}
