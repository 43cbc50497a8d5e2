#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "core/error_list.hpp"
#include "core/job_spec.hpp"
#include "core/time_text.hpp"

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
        "job.toml: name: expected a job name of letters, digits, '.', '_' or '-', not starting "
        "with '.' or '-', got the string \"a b\"");
  CHECK(!valid_job_name("."));
  CHECK(!valid_job_name(".."));
  // Never a flag where a name reaches a command line (sia-run logs JOB, --node NAME).
  CHECK(!valid_job_name("-rf"));
  CHECK(!valid_job_name("--help"));
  CHECK(!valid_node_name("-oProxyCommand=x"));
  CHECK(valid_job_name("a-"));
  CHECK(error_of([] { spec_from_toml("name = \"--help\"\nmodel = \"x\"\n"); }).second ==
        "job.toml: name: expected a job name of letters, digits, '.', '_' or '-', not starting "
        "with '.' or '-', got the string \"--help\"");
  CHECK(valid_job_name("resnet-50.v2_a"));
  CHECK(error_of([] { spec_from_toml("name = \"..\"\nmodel = \"x\"\n"); }).first == 65);
  CHECK(error_of([] { spec_from_toml("name = \"a\"\n"); }).second ==
        "job.toml: expected a model (catalog key) or a profile");
  CHECK(
      error_of([] { spec_from_toml("name=\"a\"\nmodel=\"x\"\nadaptivity=\"rigid\"\n"); }).second ==
      "job.toml: a rigid job needs gpus (its fixed GPU count)\n"
      "job.toml: a rigid job needs batch_size (its fixed global batch)");
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

TEST_CASE("an unknown key in a job spec is an error suggesting the nearest", "[job_spec]") {
  CHECK(error_of([] { spec_from_toml("name=\"a\"\nmodel=\"bert\"\nmax_gpu=4\n"); }) ==
        std::pair<int, std::string>{
            65, "job.toml: max_gpu: unknown key \"max_gpu\" (did you mean \"max_gpus\"?)"});
  CHECK(error_of([] { spec_from_toml("name=\"a\"\nmodel=\"bert\"\nflavour=\"x\"\n"); }).second ==
        "job.toml: flavour: unknown key \"flavour\"");
  // In a Jobs document too, named by its path.
  auto jobs = parse_documents(
      R"({"apiVersion":"sia/v1","kind":"Jobs","data":{"jobs":[{"name":"a","model":"bert",)"
      R"("allowed_gpu_type":["t4"]}]}})",
      "jobs.json", {"Jobs"});
  CHECK(error_of([&] { parse_job_spec(jobs.front().data().at("jobs")[0]); }).second ==
        "jobs.json: jobs[0].allowed_gpu_type: unknown key \"allowed_gpu_type\" (did you mean "
        "\"allowed_gpu_types\"?)");
}

TEST_CASE("job spec numbers are range-checked, never wrapped", "[job_spec]") {
  auto err = [](const std::string& extra) {
    return error_of([&] { spec_from_toml("name=\"a\"\nmodel=\"bert\"\n" + extra); });
  };
  CHECK(err("min_gpus = 4294967297\n") ==
        std::pair<int, std::string>{65,
                                    "job.toml: min_gpus: expected an integer from 1 to "
                                    "1000000, got the number 4294967297"});
  CHECK(err("adaptivity=\"strong-scaling\"\nbatch_size = 1e19\n").second ==
        "job.toml: batch_size: expected a number from 1 to 1000000000, got the number 1e+19");
  CHECK(err("restart_cost = 1e300\n").first == 65);
  CHECK(err("submit_time = -1\n").first == 65);
  CHECK(err("priority = 9999999999\n").first == 65);
  CHECK(err("gpus = 0\n").first == 65);
  // A JSON number beyond a double is bad data, not an internal error.
  CHECK(error_of([] {
          parse_documents(R"({"apiVersion":"sia/v1","kind":"JobSpec","data":{"name":"a",)"
                          R"("model":"bert","batch_size":1e400}})",
                          "job.json", {"JobSpec"});
        }).first == 65);
}

TEST_CASE("what sia's writers emit for a job reads back", "[job_spec]") {
  // Every field job_spec_to_json writes, and the state a Jobs document carries.
  JobSpec s = spec_from_toml(
      "name = \"x\"\nmodel = \"bert\"\nadaptivity = \"strong-scaling\"\nmin_gpus = 2\n"
      "max_gpus = 8\ngpus = 8\ninit_batch_size = 64\nmax_batch_size = 4096\n"
      "batch_size = 512\npipeline_stages = 1\nrestart_cost = 12.5\n"
      "allowed_gpu_types = [\"t4\"]\npriority = -3\npreemptible = false\nsubmit_time = 7\n"
      "command = [\"w\", \"--x\"]\n");
  nlohmann::json j = job_spec_to_json(s);
  j["state"] = {{"age", 3.0}, {"restarts", 1}};
  auto doc = test::doc_from(dump_document("Jobs", nlohmann::json::object(), {{"jobs", {j}}}, false),
                            "Jobs");
  JobSpec back = parse_job_spec(doc.data().at("jobs")[0]);
  CHECK(job_spec_to_json(back) == job_spec_to_json(s));
}

TEST_CASE("a file of another kind is named as such", "[job_spec]") {
  CHECK(error_of([] {
          parse_documents("name = \"c\"\n[[node_groups]]\ngpu_type = \"t4\"\n", "cluster.toml",
                          {"JobSpec", "Jobs"});
        }).second ==
        "cluster.toml: expected a JobSpec or Jobs document, got what looks like a Cluster");
  // A TOML file of several jobs needs no kind = "Jobs".
  auto docs = parse_documents("[[jobs]]\nname = \"a\"\nmodel = \"bert\"\n", "jobs.toml",
                              {"Jobs", "JobSpec"});
  CHECK(docs.front().kind == "Jobs");
  docs = parse_documents("name = \"a\"\nmodel = \"bert\"\n", "job.toml", {"Jobs", "JobSpec"});
  CHECK(docs.front().kind == "JobSpec");
}

TEST_CASE("a workdir is an absolute path, kept through JSON", "[job_spec]") {
  JobSpec s = spec_from_toml(
      "name = \"w\"\nmodel = \"cifar10\"\ncommand = [\"python3\", \"train.py\"]\n"
      "workdir = \"/home/alice/cnn\"\n");
  CHECK(s.workdir == "/home/alice/cnn");
  CHECK(job_spec_to_json(s).at("workdir") == "/home/alice/cnn");
  CHECK(job_spec_to_json(spec_from_toml("name = \"w\"\nmodel = \"cifar10\"\n")).count("workdir") ==
        0);
  auto e = error_of([] { spec_from_toml("name = \"w\"\nmodel = \"x\"\nworkdir = \"cnn\"\n"); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "job.toml: workdir: expected an absolute directory path, got the string \"cnn\"");
  CHECK(error_of([] { spec_from_toml("name = \"w\"\nmodel = \"x\"\nworkdir = \"\"\n"); }).first ==
        65);
}

TEST_CASE("a job spec with several mistakes reports them all, one a line", "[job_spec]") {
  // Three bad fields, an unknown key and a missing model: every one, in one run.
  const auto e = error_of([] {
    spec_from_toml(
        "name = \"a b\"\nmin_gpus = 0\ninit_batch_size = 2e9\nmax_gpu = 3\n"
        "adaptivity = \"elastic\"\n");
  });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "job.toml: max_gpu: unknown key \"max_gpu\" (did you mean \"max_gpus\"?)\n"
        "job.toml: name: expected a job name of letters, digits, '.', '_' or '-', not starting "
        "with '.' or '-', got the string \"a b\"\n"
        "job.toml: adaptivity: expected one of \"adaptive\", \"strong-scaling\", \"rigid\", "
        "\"scale-gpus\", got the string \"elastic\"\n"
        "job.toml: min_gpus: expected an integer from 1 to 1000000, got the number 0\n"
        "job.toml: init_batch_size: expected a number from 1 to 1000000000, got the number "
        "2000000000.0\n"
        "job.toml: expected a model (catalog key) or a profile");
  // A field given but wrong is not also reported as missing.
  CHECK(error_of([] { spec_from_toml("name = \"a\"\nmodel = 3\n"); }).second ==
        "job.toml: model: expected a string, got the number 3");
}

TEST_CASE("ErrorList keeps every line once and the first status", "[job_spec]") {
  ErrorList errors;
  CHECK(errors.check([] {}));
  CHECK(errors.empty());
  errors.throw_if_any();  // nothing
  CHECK_FALSE(errors.check([] { throw Error(ExitStatus::config, "f: a: bad\nf: b: bad"); }));
  errors.add(Error(ExitStatus::data, "f: a: bad"));  // said already
  errors.add(Error(ExitStatus::data, "f: c: bad"));
  const auto e = error_of([&] { errors.throw_if_any(); });
  CHECK(e.first == 78);
  CHECK(e.second == "f: a: bad\nf: b: bad\nf: c: bad");
}

TEST_CASE("a deadline is a UTC time or a duration from submission", "[job_spec][deadline]") {
  CHECK(duration_seconds("90m") == 5400);
  CHECK(duration_seconds("36h") == 36 * 3600);
  CHECK(duration_seconds("2d") == 2 * 86400);
  CHECK(duration_seconds("30s") == 30);
  for (const char* bad : {"", "h", "1.5h", "-3h", "3w", "nan", "3 h"}) {
    CHECK_FALSE(duration_seconds(bad));
  }
  CHECK(utc_seconds("2026-12-05T18:00:00Z") == 1796083200 + 4 * 86400 + 18 * 3600);
  CHECK(utc_text(1796083200) == "2026-12-01T00:00:00Z");
  CHECK_FALSE(utc_seconds("2026-12-05 18:00"));

  JobSpec a = spec_from_toml(
      "name=\"a\"\nmodel=\"x\"\nclass=\"guaranteed\"\ndeadline=\"2026-12-05T18:00:00Z\"\n");
  CHECK(a.job_class == JobClass::guaranteed);
  CHECK(a.deadline == 1796083200 + 4 * 86400 + 18 * 3600);
  JobSpec b = spec_from_toml("name=\"b\"\nmodel=\"x\"\ndeadline=\"36h\"\n");
  CHECK(b.job_class == JobClass::best_effort);
  CHECK_FALSE(b.deadline);
  CHECK(b.deadline_after == 36 * 3600);
  // The duration survives the request (JSON) and becomes a time at submission.
  JobSpec c = parse_job_spec(Node(job_spec_to_json(b), "x", ""));
  CHECK(c.deadline_after == 36 * 3600);
  resolve_deadline(c, 1000, "b");
  CHECK(c.deadline == 1000 + 36 * 3600);
  CHECK_FALSE(c.deadline_after);
  JobSpec d = parse_job_spec(Node(job_spec_to_json(a), "x", ""));
  CHECK(d.deadline == a.deadline);
  CHECK(d.job_class == JobClass::guaranteed);
}

TEST_CASE("a bad deadline or class is one line naming the field", "[job_spec][deadline]") {
  CHECK(error_of([] {
          spec_from_toml("name=\"a\"\nmodel=\"x\"\nclass=\"gold\"\ndeadline=\"3h\"\n");
        }).second ==
        "job.toml: class: expected one of \"guaranteed\", \"best_effort\", got "
        "the string \"gold\"");
  CHECK(error_of([] {
          spec_from_toml("name=\"a\"\nmodel=\"x\"\nclass=\"guaranteed\"\n");
        }).second == "job.toml: class: a guaranteed job needs a deadline");
  auto deadline_error = [](const std::string& v) {
    return error_of([&] { spec_from_toml("name=\"a\"\nmodel=\"x\"\ndeadline=" + v + "\n"); });
  };
  for (const char* v : {"nan", "inf", "-5", "\"tomorrow\"", "\"2026-13-01\"", "\"0h\""}) {
    auto [status, line] = deadline_error(v);
    CHECK(status == 65);
    CHECK(line.rfind("job.toml: deadline: expected ", 0) == 0);  // NaN, inf: a number in range
    CHECK(line.find('\n') == std::string::npos);
  }
  JobSpec past = spec_from_toml("name=\"a\"\nmodel=\"x\"\ndeadline=\"2020-01-01T00:00:00Z\"\n");
  CHECK(error_of([&] { resolve_deadline(past, 1796083200, "job.toml: a"); }).second ==
        "job.toml: a: deadline: 2020-01-01T00:00:00Z is not after submission "
        "(2026-12-01T00:00:00Z)");
  CHECK(error_of([] { parse_job_class("gold", "--class"); }).first == 65);
  JobSpec e = spec_from_toml("name=\"e\"\nmodel=\"x\"\n");
  CHECK(error_of([&] {
          set_deadline_text(e, "soon", "--deadline");
        }).second.rfind("--deadline: expected a UTC time", 0) == 0);
  set_deadline_text(e, "2d", "--deadline");
  CHECK(e.deadline_after == 2 * 86400);
}
