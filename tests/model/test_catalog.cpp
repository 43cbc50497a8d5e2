#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "model/catalog.hpp"
#include "test_util.hpp"

using namespace sia;

// Figures computed from the published Sia artifact's profiling CSVs (Subramanya et al.,
// SOSP '23), the catalog's sources.
TEST_CASE("placement ids are the smallest cyclic rotation", "[catalog]") {
  CHECK(placement_id({3, 1}) == "13");
  CHECK(placement_id({2, 1, 3}) == "132");
  CHECK(placement_id({1, 3, 2}) == "132");
  CHECK(placement_id({4, 0, 4}) == "44");
  CHECK(placement_id({8}) == "8");
}

TEST_CASE("the catalog holds every model with the artifact's limits", "[catalog]") {
  Catalog c(test::catalog_dir());
  CHECK(c.names() == std::vector<std::string>{"bert", "cifar10", "deepspeech2", "gpt_pmp",
                                              "imagenet", "ncf", "yolov3"});
  const ModelInfo& cifar = c.get("cifar10");
  CHECK(cifar.init_batch_size == 128);
  CHECK(cifar.max_batch_size == 4096);
  CHECK(cifar.max_epochs == 100);
  CHECK(cifar.restart_cost == 50);
  CHECK(cifar.restart_penalty == 30);
  CHECK(cifar.slowdown == 1.8);
  CHECK(cifar.gpus.size() == 6);
  CHECK(cifar.gpu("t4")->min_local_bsz == 32);
  CHECK(cifar.gpu("t4")->max_local_bsz == 1024);
  CHECK(cifar.gpu("a100")->max_local_bsz == 4096);
  CHECK(cifar.gpu("v100")->max_local_bsz == 3072);
  CHECK(c.get("deepspeech2").gpu("rtx2080ti")->max_local_bsz == 57);
  CHECK(c.get("imagenet").init_batch_size == 200);
  CHECK(c.get("imagenet").max_batch_size == 12800);
  CHECK(c.get("yolov3").restart_penalty == 45);
  CHECK(c.get("gpt_pmp").gpu("rtx2080ti")->pipeline_stages == 8);
  CHECK(c.get("gpt_pmp").gpu("a100")->pipeline_stages == 2);
  CHECK(c.get("gpt_pmp").gpu("a100")->max_local_bsz == 48);
}

TEST_CASE("single-GPU throughputs match the reference table", "[catalog]") {
  Catalog c(test::catalog_dir());
  struct Row {
    const char* model;
    const char* type;
    double xput;
  };
  const Row rows[] = {
      {"bert", "t4", 13.02},        {"bert", "v100", 41.58},       {"bert", "a100-capped", 73.84},
      {"bert", "a100", 140.44},     {"bert", "rtx6000", 37.44},    {"bert", "rtx2080ti", 26.85},
      {"cifar10", "t4", 1458.5},    {"cifar10", "a100", 10062.6},  {"cifar10", "rtx2080ti", 3306.3},
      {"deepspeech2", "t4", 31.49}, {"imagenet", "a100", 1034.0},  {"imagenet", "rtx2080ti", 395.2},
      {"yolov3", "t4", 27.94},      {"yolov3", "rtx2080ti", 11.72}};
  for (const auto& r : rows) {
    INFO(r.model << " on " << r.type);
    CHECK(c.get(r.model).gpu(r.type)->single_gpu_throughput() == Approx(r.xput).epsilon(1e-3));
  }
}

TEST_CASE("progress targets match the reference table", "[catalog]") {
  Catalog c(test::catalog_dir());
  CHECK(c.get("cifar10").target_progress() == Approx(39062.90816659533).epsilon(1e-12));
  CHECK(c.get("cifar10").progress_at_epoch(1) == Approx(390.71438596642224).epsilon(1e-12));
  CHECK(c.get("bert").target_progress() == 14774.0);
  CHECK(c.get("deepspeech2").target_progress() == 28536.0);
  CHECK(c.get("yolov3").target_progress() == Approx(103443.97796253164).epsilon(1e-12));
  CHECK(c.get("imagenet").target_progress() == Approx(576525.594895604).epsilon(1e-12));
  CHECK(c.get("ncf").target_progress() == 194174.0);
  CHECK(c.get("gpt_pmp").target_progress() == 14774.0);
}

TEST_CASE("the seed profile is the single-GPU rows of every type", "[catalog]") {
  Catalog c(test::catalog_dir());
  Profile p = c.get("bert").seed_profile();
  int t4 = 0;
  for (const auto& pt : p.points) {
    CHECK(pt.replicas == 1);
    CHECK(pt.nodes == 1);
    if (pt.gpu_type == "t4") ++t4;
  }
  CHECK(t4 == 5);
  CHECK(p.model == "bert");
}

TEST_CASE("unknown models are reported with what the catalog has", "[catalog]") {
  Catalog c(test::catalog_dir());
  auto e = test::error_of([&] { c.get("resnet9000", "jobs.json: jobs[2].model"); });
  CHECK(e.first == 65);
  CHECK(e.second.rfind("jobs.json: jobs[2].model: unknown model \"resnet9000\" (catalog ", 0) == 0);
  CHECK(e.second.find("has: bert, cifar10") != std::string::npos);
}

// Found by fuzz/document: a table row shorter than its columns was indexed past its end
// (a heap-buffer-overflow under ASan); it is bad data naming the row.
TEST_CASE("a model table row shorter than its columns is bad data", "[catalog]") {
  Document doc = read_document(test::catalog_dir() + "/cifar10.json", {"Model"});
  nlohmann::json data = doc.data().json();
  data["gpu_types"][0]["placements"]["rows"][0] = {"1", 4, 0.5};
  data["validation"][0]["rows"][0].erase(4);
  auto e = test::error_of([&] { parse_model(Node(data, "m.json", "")); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "m.json: gpu_types[0].placements.rows[0]: expected an array of at least 4 elements, got "
        "an array");
  data["gpu_types"][0]["placements"]["rows"][0] = {"1", 4, 0.5, 0.01};
  e = test::error_of([&] { parse_model(Node(data, "m.json", "")); });
  CHECK(e.second ==
        "m.json: validation[0].rows[0]: expected an array of at least 5 elements, got an array");
}
