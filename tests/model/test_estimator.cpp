#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/estimator.hpp"
#include "model/shared_profiles.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

struct Fixture {
  Cluster cluster = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  Catalog catalog{test::catalog_dir()};
};

JobState job(const std::string& name, const std::string& model) {
  JobState j;
  j.spec.name = name;
  j.spec.model = model;
  return j;
}

// A job that ran on 4 A100s and reported gradient statistics.
JobState ran_on_a100(const Catalog& catalog) {
  JobState j = job("c", "cifar10");
  j.age = 600;
  j.current = CurrentAllocation{"a100", {4}};
  for (const auto& r : catalog.get("cifar10").gpu("a100")->placements) {
    if ((r.placement == "2" || r.placement == "4") && r.local_bsz >= 128 && r.local_bsz <= 512) {
      j.observations.push_back({"a100", 1, r.replicas, r.local_bsz, r.step_time, r.sync_time});
    }
  }
  j.gradient = GradientStats{1.9, 1.6};
  return j;
}

const GoodputEntry* find(const GoodputRow& r, int type, int gpus) {
  for (const auto& e : r.entries) {
    if (e.config.type == type && e.config.gpus == gpus) return &e;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a new job is offered one GPU of each type, valued by its profile", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = job("new", "cifar10");
  GoodputRow r = est.estimate_job(j);
  REQUIRE(r.entries.size() == 3);
  CHECK(r.max_gpus == 1);
  for (const auto& e : r.entries) {
    CHECK(e.config.gpus == 1);
    CHECK(e.source == GoodputSource::model);
    CHECK(e.batch.global == 128);
  }
  // Normalised: the slowest type (t4) is worth 1, the A100 more than the RTX.
  CHECK(r.entries[0].goodput == Approx(1.0));
  CHECK(r.entries[1].goodput > r.entries[2].goodput);
  CHECK(r.entries[2].goodput > 1.0);
  CHECK(r.restart_penalty == 50);  // the simulated checkpoint-restore of cifar10
  CHECK(j.models.size() == 3);     // fits cached in the job's state
}

TEST_CASE("reference profile: a new job is indifferent between types", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog, estimator_options(Compat::reference));
  JobState j = job("new", "cifar10");
  GoodputRow r = est.estimate_job(j);
  REQUIRE(r.entries.size() == 3);
  for (const auto& e : r.entries) {
    CHECK(e.goodput == 1.0);
    CHECK(e.config.gpus == 1);
    CHECK(e.source == GoodputSource::fallback);
  }
  CHECK(r.restart_penalty == 30);  // the artifact's scheduler-side penalty
}

TEST_CASE("scale-up rule and bootstrapping to other types", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = ran_on_a100(f.catalog);
  GoodputRow r = est.estimate_job(j);
  CHECK(r.max_gpus == 8);
  REQUIRE(r.current);
  CHECK(r.current->type == 1);
  CHECK(r.current->gpus == 4);
  for (const auto& e : r.entries) {
    CHECK(e.config.gpus <= 8);
    CHECK(e.source == (e.config.type == 1 ? GoodputSource::model : GoodputSource::bootstrap));
  }
  REQUIRE(find(r, 1, 8));
  REQUIRE(find(r, 0, 8));  // two whole T4 nodes
  CHECK_FALSE(find(r, 0, 12));
  // More GPUs of the same type never lose goodput for this job here.
  CHECK(find(r, 1, 8)->raw_goodput > find(r, 1, 4)->raw_goodput);
  // Eq. 1: a bootstrapped type has the source's shape, scaled by its 1-GPU ratio.
  double ratio1 = find(r, 0, 1)->raw_goodput / find(r, 1, 1)->raw_goodput;
  double ratio4 = find(r, 0, 4)->raw_goodput / find(r, 1, 4)->raw_goodput;
  CHECK(ratio4 == Approx(ratio1).epsilon(1e-9));
}

TEST_CASE("reference profile: projection uses the catalog's throughput ratio", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog, estimator_options(Compat::reference));
  JobState j = ran_on_a100(f.catalog);
  j.spec.batch_size = 4096;
  GoodputRow r = est.estimate_job(j);
  const auto& cifar = f.catalog.get("cifar10");
  double x_t4 = cifar.gpu("t4")->single_gpu_throughput();
  double x_a100 = cifar.gpu("a100")->single_gpu_throughput();
  REQUIRE(find(r, 0, 4));
  REQUIRE(find(r, 1, 4));
  CHECK(find(r, 0, 4)->raw_goodput == Approx(find(r, 1, 4)->raw_goodput * x_t4 / x_a100));
  CHECK(find(r, 0, 4)->source == GoodputSource::bootstrap);
  // The row minimum is 1.
  double m = 1e9;
  for (const auto& e : r.entries) m = std::min(m, e.goodput);
  CHECK(m == Approx(1.0));
}

TEST_CASE("constraints: allowed types, max GPUs, rigid jobs", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = ran_on_a100(f.catalog);
  j.spec.allowed_gpu_types = {"a100"};
  j.spec.max_gpus = 2;
  GoodputRow r = est.estimate_job(j);
  for (const auto& e : r.entries) {
    CHECK(e.config.type == 1);
    CHECK(e.config.gpus <= 2);
  }
  JobState rigid = job("r", "bert");
  rigid.spec.adaptivity = Adaptivity::rigid;
  rigid.spec.gpus = 6;
  rigid.spec.batch_size = 96;
  GoodputRow rr = est.estimate_job(rigid);
  REQUIRE(rr.entries.size() == 3);
  double m = 1e9;
  for (const auto& e : rr.entries) {
    CHECK(e.config.gpus == 6);
    CHECK(e.batch.global == 96);
    m = std::min(m, e.goodput);
  }
  CHECK(m == Approx(6.0));
  CHECK(rr.entries[0].config.nodes == 2);  // 6 T4s need two 4-GPU nodes
}

TEST_CASE("estimator errors name the job's field", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = job("x", "nosuchmodel");
  j.file = "jobs.json";
  j.path = "jobs[4]";
  auto e = test::error_of([&] { est.estimate_job(j); });
  CHECK(e.first == 65);
  CHECK(e.second.rfind("jobs.json: jobs[4].model: unknown model \"nosuchmodel\"", 0) == 0);
}

TEST_CASE("cached fits are reused while the observations are unchanged", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = ran_on_a100(f.catalog);
  GoodputRow a = est.estimate_job(j);
  PerfParams cached = j.models.at("a100").params;
  GoodputRow b = est.estimate_job(j);
  CHECK(j.models.at("a100").params == cached);
  REQUIRE(a.entries.size() == b.entries.size());
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    CHECK(a.entries[i].goodput == b.entries[i].goodput);
  }
}

TEST_CASE("with an observations version, what was resolved is reused until it changes",
          "[estimator]") {
  Fixture f;
  EstimatorOptions o;
  o.profile_store = ProfileStore::fit;
  Estimator est(f.cluster, f.catalog, o);
  JobState plain = ran_on_a100(f.catalog);
  JobState versioned = plain;
  versioned.observations_version = 1;
  auto same_rows = [](const GoodputRow& a, const GoodputRow& b) {
    REQUIRE(a.entries.size() == b.entries.size());
    for (std::size_t i = 0; i < a.entries.size(); ++i) {
      CHECK(a.entries[i].goodput == b.entries[i].goodput);
      CHECK(a.entries[i].batch == b.entries[i].batch);
    }
    CHECK(a.model.blind_params == b.model.blind_params);
  };
  same_rows(est.estimate_job(plain), est.estimate_job(versioned));
  CHECK(versioned.resolved.count("a100") == 1);
  CHECK(versioned.resolved.count("*") == 1);
  CHECK(plain.resolved.empty());                                    // version 0: nothing kept
  same_rows(est.estimate_job(plain), est.estimate_job(versioned));  // from the memo
  // A new measurement with a new version is seen; so is one the profile store learns.
  const auto& r = *f.catalog.get("cifar10").gpu("a100");
  for (const auto& row : r.placements) {
    if (row.placement == "8" && row.local_bsz == 256) {
      for (JobState* j : {&plain, &versioned}) {
        j->observations.push_back({"a100", 1, 8, 256, row.step_time, row.sync_time});
      }
    }
  }
  REQUIRE(plain.observations.size() == versioned.observations.size());
  versioned.observations_version = 2;
  same_rows(est.estimate_job(plain), est.estimate_job(versioned));
  CHECK(versioned.resolved.at("a100").model.points == est.type_model(plain, 1).points);
  JobState teacher = job("teacher", "cifar10");
  teacher.observations.push_back({"t4", 1, 2, 128, 0.3, 0.05});
  const std::size_t before = est.store_generation();
  est.record(teacher);
  CHECK(est.store_generation() > before);
  CHECK(est.type_model(versioned, 0).points == est.type_model(plain, 0).points);
  // Another estimator (here without the store) resolves afresh what this one kept.
  Estimator bare(f.cluster, f.catalog);
  CHECK(bare.type_model(versioned, 0).points == bare.type_model(plain, 0).points);
  CHECK(bare.type_model(versioned, 0).points < est.type_model(versioned, 0).points);
}

TEST_CASE("a type's resolved model is kept while only other types are measured", "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = ran_on_a100(f.catalog);
  j.observations_version = 1;
  est.type_model(j, 1);
  REQUIRE(j.resolved.count("a100") == 1);
  const int marker = 12345;  // what only the memo holds: seen again if the memo is reused
  j.resolved.at("a100").model.points = marker;
  // A measurement on t4 (a new version): a100's memo stands, t4 is resolved with it.
  j.observations.push_back({"t4", 1, 2, 128, 0.3, 0.05});
  j.observations_version = 2;
  CHECK(est.type_model(j, 1).points == marker);
  JobState plain = j;
  plain.observations_version = 0;
  CHECK(est.type_model(j, 0).points == est.type_model(plain, 0).points);
  // A measurement on a100: resolved afresh, as a job without a version is.
  j.observations.push_back({"a100", 1, 2, 64, 0.2, 0.04});
  j.observations_version = 3;
  plain.observations = j.observations;
  const TypeModel fresh = est.type_model(j, 1);
  CHECK(fresh.points != marker);
  CHECK(fresh.points == est.type_model(plain, 1).points);
  CHECK(fresh.params == est.type_model(plain, 1).params);
}

TEST_CASE("every configuration's batch is local_bsz x replicas x (accum_steps + 1)",
          "[estimator][property]") {
  // The identity the workers rely on (SIA_BATCH_SIZE = SIA_LOCAL_BSZ x WORLD_SIZE x
  // (SIA_ACCUM_STEPS + 1)), over every data-parallel model, every adaptivity, jobs new and
  // observed, both profiles, and fixed batches that do not divide evenly.
  Fixture f;
  int checked = 0;
  for (bool reference : {false, true}) {
    EstimatorOptions o = estimator_options(reference ? Compat::reference : Compat::standard);
    o.baseline_info = true;  // also the tuned fixed configurations the baselines allocate
    for (const auto& model : f.catalog.names()) {
      if (f.catalog.get(model).gpus.front().pipeline_stages > 1) continue;
      for (int variant = 0; variant < 4; ++variant) {
        Estimator est(f.cluster, f.catalog, o);
        JobState j = job(model + "-" + std::to_string(variant), model);
        if (variant == 1) {
          j.spec.adaptivity = Adaptivity::strong_scaling;
          j.spec.batch_size = 1001;  // odd: no GPU count divides it
          j.spec.gpus = 16;
          j.spec.min_gpus = 3;
        } else if (variant == 2) {
          j.spec.adaptivity = Adaptivity::rigid;
          j.spec.batch_size = 997;
          j.spec.gpus = 6;
        } else if (variant == 3) {
          j = ran_on_a100(f.catalog);
          j.spec.name = model + "-ran";
          j.spec.model = model;
          j.spec.allowed_gpu_types = {"a100", "t4"};
        }
        GoodputRow r;
        try {
          r = est.estimate_job(j);
        } catch (const Error&) {
          continue;  // a batch outside what the model allows: no row, nothing to check
        }
        std::vector<GoodputEntry> all = r.entries;
        all.insert(all.end(), r.fixed.begin(), r.fixed.end());
        for (const auto& e : all) {
          INFO(model << " variant " << variant << " type " << e.config.type << " gpus "
                     << e.config.gpus << (reference ? " reference" : ""));
          CHECK(batch_mismatch(e.batch, e.config.gpus).empty());
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("profiling levels name what the estimator seeds", "[estimator]") {
  CHECK(parse_profiling("oracle") == Profiling::oracle);
  auto e = test::error_of([] { parse_profiling("full"); });
  CHECK(e.first == 64);
  CHECK(e.second == "--profiling: expected none, bootstrap or oracle, got \"full\"");
  EstimatorOptions none;
  apply_profiling(none, Profiling::none);
  CHECK_FALSE(none.seed_profiles);
  CHECK_FALSE(none.project);
  EstimatorOptions oracle;
  apply_profiling(oracle, Profiling::oracle);
  CHECK(oracle.oracle_profiles);
}

TEST_CASE("without profiling every type looks alike; an oracle knows every placement",
          "[estimator]") {
  Fixture f;
  EstimatorOptions none;
  apply_profiling(none, Profiling::none);
  Estimator blind(f.cluster, f.catalog, none);
  JobState j = job("new", "cifar10");
  GoodputRow r = blind.estimate_job(j);
  REQUIRE(r.entries.size() == 3);
  for (const auto& e : r.entries) CHECK(e.goodput == Approx(r.entries[0].goodput));

  EstimatorOptions oracle;
  apply_profiling(oracle, Profiling::oracle);
  Estimator knows(f.cluster, f.catalog, oracle);
  Estimator boot(f.cluster, f.catalog);
  JobState k = job("new", "cifar10");
  JobState b = job("new", "cifar10");
  TypeModel a100 = knows.type_model(k, 1);
  CHECK(a100.multi_gpu);
  CHECK(a100.points > boot.type_model(b, 1).points);
  // The scale-up rule still holds: a job that never ran gets one GPU.
  CHECK(knows.estimate_job(k).max_gpus == 1);
  // Once it ran on 4 A100s it may use 8 on any type, valued by the oracle's own models.
  JobState ran = ran_on_a100(f.catalog);
  GoodputRow o = knows.estimate_job(ran);
  CHECK(o.max_gpus == 8);
  REQUIRE(find(o, 0, 8) != nullptr);
  CHECK(find(o, 0, 8)->source == GoodputSource::model);
}

TEST_CASE("a current configuration off the set is valued too, within the replica bounds",
          "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog);
  JobState j = ran_on_a100(f.catalog);
  const GoodputRow in_set = est.estimate_job(j);
  auto at = [](const GoodputRow& r, int nodes, int gpus) -> const GoodputEntry* {
    for (const auto& e : r.entries) {
      if (e.config.type == 1 && e.config.nodes == nodes && e.config.gpus == gpus) return &e;
    }
    return nullptr;
  };
  CHECK_FALSE(at(in_set, 2, 3));
  // A placer of the user's own ran it on 2 GPUs of one node and 1 of another.
  j.current = CurrentAllocation{"a100", {2, 1}};
  GoodputRow r = est.estimate_job(j);
  REQUIRE(r.current);
  CHECK(*r.current == Config{1, 2, 3});
  const GoodputEntry* e = at(r, 2, 3);
  REQUIRE(e);
  CHECK(e->source == GoodputSource::model);
  CHECK(e->raw_goodput > at(r, 1, 2)->raw_goodput);
  CHECK(e->raw_goodput < at(r, 1, 4)->raw_goodput);  // fewer GPUs, and across two nodes
  CHECK(e->batch.local > 0);
  CHECK(e->batch.global == 3 * e->batch.local * (e->batch.accum_steps + 1));
  CHECK(r.entries.size() == in_set.entries.size() + 1);
  // Past the replica bounds (the scale-up rule: 8 here) it is not offered.
  j.current = CurrentAllocation{"a100", {8, 4}};
  CHECK(est.estimate_job(j).entries.size() == in_set.entries.size());
  // A reused row gains it, and loses it, as the job's configuration changes.
  j.observations_version = 1;
  j.current.reset();
  CHECK(est.estimate_job(j).entries.size() == in_set.entries.size());
  j.current = CurrentAllocation{"a100", {1, 2}};
  CHECK(at(est.estimate_job(j), 2, 3));
  j.current = CurrentAllocation{"a100", {4}};
  CHECK_FALSE(at(est.estimate_job(j), 2, 3));
}

TEST_CASE("a reused row is the row a fresh estimate gives, until its inputs change",
          "[estimator]") {
  Fixture f;
  Estimator est(f.cluster, f.catalog, estimator_options(Compat::standard));
  JobState plain = ran_on_a100(f.catalog);  // version 0: estimated afresh every time
  JobState versioned = plain;
  versioned.observations_version = 1;
  auto text = [&](const GoodputRow& r) {
    GoodputMatrix m;
    m.cluster = f.cluster;
    m.jobs = {r};
    return goodput_matrix_document(m, nlohmann::json::object(), false);
  };
  // Estimates both; true when the versioned job's row came from its last one (which the
  // test marks with a goodput no estimate gives), and then checks it against a fresh one.
  auto reused = [&] {
    REQUIRE(versioned.estimated);
    versioned.estimated->row.normalizer = -1;
    GoodputRow row = est.estimate_job(versioned);
    const bool kept = row.normalizer == -1;
    row.normalizer = versioned.estimated->row.normalizer = est.estimate_job(plain).normalizer;
    CHECK(text(row) == text(est.estimate_job(plain)));
    return kept;
  };
  CHECK(text(est.estimate_job(versioned)) == text(est.estimate_job(plain)));
  CHECK_FALSE(plain.estimated);
  // What changes every round is refreshed in a reused row.
  for (JobState* j : {&plain, &versioned}) {
    j->age += 60;
    j->restarts = 2;
    j->attained_service = 1200;
    j->restoring = true;
    j->progress = 900;
    j->current = CurrentAllocation{"t4", {4}};  // one of the set
  }
  CHECK(reused());
  CHECK(est.estimate_job(versioned).restarts == 2);
  for (JobState* j : {&plain, &versioned}) j->current.reset();
  CHECK(reused());
  // New gradient statistics: estimated afresh.
  for (JobState* j : {&plain, &versioned}) j->gradient = GradientStats{1.8, 1.7};
  CHECK_FALSE(reused());
  CHECK(reused());
  // A new measurement (with a new version): afresh.
  for (JobState* j : {&plain, &versioned}) j->observations.push_back({"t4", 1, 1, 128, 0.2, 0});
  versioned.observations_version = 2;
  CHECK_FALSE(reused());
  // The store learns a measurement of this model: afresh; of another model: reused.
  JobState other = job("other", "imagenet");
  other.observations.push_back({"t4", 1, 2, 64, 0.5, 0.1});
  est.record(other);
  CHECK(reused());
  JobState teacher = job("teacher", "cifar10");
  teacher.observations.push_back({"rtx", 1, 2, 128, 0.3, 0.05});
  est.record(teacher);
  CHECK_FALSE(reused());
  CHECK(reused());
  // Another estimator does not take this one's row.
  Estimator bare(f.cluster, f.catalog);
  versioned.estimated->row.normalizer = -1;
  CHECK(bare.estimate_job(versioned).normalizer != -1);
}

TEST_CASE("the profile store shares a model's measurements with its later jobs", "[estimator]") {
  Fixture f;
  CHECK(parse_profile_store("scale-up") == ProfileStore::scale_up);
  auto e = test::error_of([] { parse_profile_store("on"); });
  CHECK(e.first == 64);
  CHECK(e.second == "--profile-store: expected off, fit or scale-up, got \"on\"");
  const JobState first = ran_on_a100(f.catalog);
  for (ProfileStore mode : {ProfileStore::off, ProfileStore::fit, ProfileStore::scale_up}) {
    EstimatorOptions o;
    o.profile_store = mode;
    Estimator est(f.cluster, f.catalog, o);
    est.record(first);
    JobState next = job("next", "cifar10");
    JobState other = job("other", "imagenet");
    const TypeModel a100 = est.type_model(next, 1);
    // Off: the bootstrap's single-GPU rows only; on: the first job's 2- and 4-GPU runs too.
    CHECK(a100.multi_gpu == (mode != ProfileStore::off));
    CHECK_FALSE(est.type_model(other, 1).multi_gpu);  // another model learns nothing
    CHECK(next.observations.empty());                 // the job's own reports stay its own
    // The scale-up rule counts the store's 4 GPUs only with scale_up.
    CHECK(est.estimate_job(next).max_gpus == (mode == ProfileStore::scale_up ? 8 : 1));
  }
  // The reference profile ignores it in the simulator; --profiling none turns it off.
  EstimatorOptions none;
  none.profile_store = ProfileStore::fit;
  apply_profiling(none, Profiling::none);
  CHECK(none.profile_store == ProfileStore::off);
  CHECK(estimator_options(Compat::standard).profile_store == kDefaultProfileStore);
  CHECK(estimator_options(Compat::reference).profile_store == ProfileStore::off);
}

TEST_CASE("the profile store goes through its file and back", "[estimator]") {
  Fixture f;
  const JobState first = ran_on_a100(f.catalog);
  EstimatorOptions o;
  o.profile_store = ProfileStore::scale_up;
  Estimator learnt(f.cluster, f.catalog, o);
  learnt.record(first);
  learnt.record(first);  // the first measurement of a shape wins; nothing doubles
  const std::vector<Profile> store = learnt.shared_profiles();
  REQUIRE(store.size() == 1);
  CHECK(store[0].model == "cifar10");
  CHECK(store[0].points.size() == first.observations.size());
  const std::string text = shared_profiles_document(store, nlohmann::json::object());
  CHECK(shared_profiles_document(parse_shared_profiles(text, "s.json"), nlohmann::json::object()) ==
        text);
  // Another estimator started from the file estimates a new job exactly as the one that
  // learnt it.
  Estimator loaded(f.cluster, f.catalog, o);
  for (const auto& p : parse_shared_profiles(text, "s.json")) loaded.share(p);
  CHECK(loaded.shared_profiles().size() == 1);
  JobState a = job("next", "cifar10"), b = job("next", "cifar10");
  const GoodputRow ra = learnt.estimate_job(a), rb = loaded.estimate_job(b);
  CHECK(rb.max_gpus == 8);
  REQUIRE(ra.entries.size() == rb.entries.size());
  for (std::size_t i = 0; i < ra.entries.size(); ++i) {
    CHECK(ra.entries[i].goodput == rb.entries[i].goodput);
  }
  // With the store off, sharing keeps nothing.
  Estimator off(f.cluster, f.catalog);
  off.share(store[0]);
  CHECK(off.shared_profiles().empty());
  // An empty file is an empty store; a profile without its model, or a model twice, is not.
  CHECK(parse_shared_profiles(" \n", "s.json").empty());
  auto no_model = test::error_of([] {
    parse_shared_profiles(R"({"apiVersion":"sia/v1","kind":"Profile","data":{"points":[]}})",
                          "s.json");
  });
  CHECK(no_model.first == 65);
  CHECK(no_model.second.find("s.json") != std::string::npos);
  CHECK(no_model.second.find("model") != std::string::npos);
  auto twice = test::error_of([&] { parse_shared_profiles(text + text, "s.json"); });
  CHECK(twice.first == 65);
  CHECK(twice.second.find("\"cifar10\" is given twice") != std::string::npos);
  auto wrong = test::error_of([] {
    parse_shared_profiles(R"({"apiVersion":"sia/v1","kind":"Jobs","data":{"jobs":[]}})", "s.json");
  });
  CHECK(wrong.first == 65);
}
