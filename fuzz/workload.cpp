// Workloads of the simulator: parse_workload() as `sia-ctl simulate --workload` reads a
// file, once as the artifact's CSV and once as JSON Lines of job specs, against the
// bundled model catalog; every job read is written back as a JobSpec (the simulator's
// results name them).
#include <nlohmann/json.hpp>

#include "core/job_spec.hpp"
#include "fuzz_input.hpp"
#include "model/catalog.hpp"
#include "sim/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sia::Catalog catalog(sia::default_catalog_dir());
  const auto text = sia::fuzz::text(data, size);
  for (const char* file : {"fuzz.csv", "fuzz.jsonl"}) {
    sia::fuzz::run([&] {
      for (const auto& spec : sia::parse_workload(text, file, catalog)) {
        sia::job_spec_to_json(spec).dump();
      }
    });
  }
  return 0;
}
