#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "core/job_spec.hpp"

#include "test_util.hpp"

using namespace sia;
using sia::test::error_of;

static JobSpec spec_from_toml(const std::string& text) {
  return parse_job_spec(parse_documents(text, "job.toml", {"JobSpec"}).front().data());
}

TEST_CASE("a job spec reads with defaults", "[job_spec]") {
  JobSpec s = spec_from_toml("name = \"j1\"\nmodel = \"cifar10\"\n");
  CHECK(s.name == "j1");
  CHECK(s.adaptivity == Adaptivity::adaptive);
  CHECK(s.min_gpus == 1);
  CHECK(s.max_gpus == 0);
  CHECK(s.restart_cost < 0);
  CHECK(s.preemptible);
  CHECK(s.allows_type("anything"));
  JobSpec r = spec_from_toml(
      "name = \"r\"\nmodel = \"bert\"\nadaptivity = \"rigid\"\ngpus = 8\nbatch_size = 384\n"
      "allowed_gpu_types = [\"a100\"]\npriority = 3\npreemptible = false\n");
  CHECK(r.adaptivity == Adaptivity::rigid);
  CHECK(r.gpus == 8);
  CHECK_FALSE(r.allows_type("t4"));
  CHECK(r.allows_type("a100"));
  CHECK_FALSE(r.preemptible);
  // The artifact's category name is accepted.
  CHECK(spec_from_toml("name=\"s\"\nmodel=\"bert\"\nadaptivity=\"scale-gpus\"\nbatch_size=96\n")
            .adaptivity == Adaptivity::strong_scaling);
}

TEST_CASE("job spec errors name the field", "[job_spec]") {
  CHECK(error_of([] { spec_from_toml("model = \"x\"\n"); }).second ==
        "job.toml: name: missing required field");
  CHECK(error_of([] { spec_from_toml("name = \"a b\"\nmodel = \"x\"\n"); }).second ==
        "job.toml: name: expected a job name of letters, digits, '-', '_', '.', got the string "
        "\"a b\"");
  CHECK(!valid_job_name("."));
  CHECK(!valid_job_name(".."));
  CHECK(valid_job_name("resnet-50.v2_a"));
  CHECK(error_of([] { spec_from_toml("name = \"..\"\nmodel = \"x\"\n"); }).first == 65);
  CHECK(error_of([] { spec_from_toml("name = \"a\"\n"); }).second ==
        "job.toml: expected a model (catalog key) or a profile");
  CHECK(error_of([] {
          spec_from_toml("name=\"a\"\nmodel=\"x\"\nadaptivity=\"rigid\"\n");
        }).second == "job.toml: a rigid job needs gpus (its fixed GPU count)");
  CHECK(error_of([] {
          spec_from_toml("name=\"a\"\nmodel=\"x\"\nadaptivity=\"elastic\"\n");
        }).second ==
        "job.toml: adaptivity: expected one of \"adaptive\", \"strong-scaling\", \"rigid\", "
        "\"scale-gpus\", got the string \"elastic\"");
  CHECK(error_of([] {
          spec_from_toml("name=\"a\"\nmodel=\"x\"\nmin_gpus=4\nmax_gpus=2\n");
        }).second == "job.toml: min_gpus: min_gpus 4 exceeds max_gpus 2");
}

TEST_CASE("a job spec round-trips through JSON", "[job_spec]") {
  JobSpec s = spec_from_toml(
      "name = \"x\"\nmodel = \"bert\"\nmax_gpus = 8\nrestart_cost = 12.5\n"
      "allowed_gpu_types = [\"t4\", \"a100\"]\n");
  auto j = job_spec_to_json(s);
  auto doc =
      test::doc_from(dump_document("JobSpec", nlohmann::json::object(), j, false), "JobSpec");
  JobSpec back = parse_job_spec(doc.data());
  CHECK(back.max_gpus == 8);
  CHECK(back.restart_cost == 12.5);
  CHECK(back.allowed_gpu_types == std::vector<std::string>{"t4", "a100"});
}
