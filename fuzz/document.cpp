// Documents of every kind: parse_documents() (JSON, JSON Lines or TOML, decided by content
// as for stdin), then each document's own reader, as the programs call them, and its writer
// (what a program prints of what it read must be printable); an Allocation is also given
// as the previous one to the policy that wrote it. The fast JSON parser is checked against
// nlohmann's, and the fast GoodputMatrix reader against the tree reader, on every input.
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/allocation.hpp"
#include "core/document.hpp"
#include "core/goodput_matrix.hpp"
#include "core/goodput_matrix_reader.hpp"
#include "core/json_cursor.hpp"
#include "core/placement.hpp"
#include "core/profile.hpp"
#include "fuzz_input.hpp"
#include "model/catalog.hpp"
#include "model/job_state.hpp"
#include "policy/policy.hpp"

using namespace sia;

static const std::vector<std::string> kKinds = {
    "Cluster", "JobSpec", "Jobs", "Profile", "Model", "GoodputMatrix", "Allocation", "Placement"};

static void read_one(const Document& d) {
  using nlohmann::json;
  if (d.kind == "Cluster") {
    dump_document("Cluster", json::object(), cluster_to_json(cluster_from_document(d)), false);
  } else if (d.kind == "JobSpec" || d.kind == "Jobs") {
    json list = json::array();
    for (const auto& j : jobs_from_documents({d})) list.push_back(job_state_to_json(j));
    dump_document("Jobs", json::object(), json{{"jobs", list}}, false);
  } else if (d.kind == "Profile") {
    dump_document("Profile", json::object(), profile_to_json(parse_profile(d.data())), false);
  } else if (d.kind == "Model") {
    dump_document("Model", json::object(), model_to_json(parse_model(d.data())), false);
  } else if (d.kind == "GoodputMatrix") {
    goodput_matrix_document(parse_goodput_matrix(d.data()), json::object(), false);
  } else if (d.kind == "Allocation") {
    const Allocation a = parse_allocation(d.data());
    dump_document("Allocation", json::object(), allocation_to_json(a), false);
    // As `sia-solve --previous`: the policy that wrote it reads its policy_state back.
    if (find_policy(a.policy)) {
      GoodputMatrix m;
      m.cluster = a.cluster;
      make_policy(a.policy, PolicyOptions{})->allocate(m, a);
    }
  } else if (d.kind == "Placement") {
    const Cluster& c = fuzz::bundled_cluster();
    dump_document("Placement", json::object(), placement_to_json(parse_placement(d.data(), c), c),
                  false);
  }
}

// parse_json_fast (parse_documents' first try) takes a text on itself only where nlohmann
// reads the same value from it, with the same number kinds.
static void check_fast_json(std::string_view text) {
  using nlohmann::json;
  const auto fast = parse_json_fast(text);
  if (!fast) return;
  json tree;
  try {
    tree = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    std::fprintf(stderr, "fuzz: parse_json_fast took what nlohmann refuses: %s\n", e.what());
    std::abort();
  }
  if (json::to_cbor(*fast) != json::to_cbor(tree)) {
    std::fprintf(stderr, "fuzz: parse_json_fast and nlohmann read different values\n");
    std::abort();
  }
}

// The fast GoodputMatrix reader (sia-solve's) takes a text on itself only where the tree
// reader reads the same matrix from it; anything else is a finding.
static void check_fast_matrix(std::string_view text) {
  const auto fast = parse_goodput_matrix_fast(text);
  if (!fast) return;
  std::string tree;
  try {
    tree = goodput_matrix_document(
        parse_goodput_matrix(parse_document(text, "fuzz", {"GoodputMatrix"}).data()),
        nlohmann::json::object(), false);
  } catch (const Error& e) {
    std::fprintf(stderr, "fuzz: the fast reader took a matrix the tree reader refuses: %s\n",
                 e.what());
    std::abort();
  }
  if (goodput_matrix_document(*fast, nlohmann::json::object(), false) != tree) {
    std::fprintf(stderr, "fuzz: the fast and the tree reader read different matrices\n");
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::bundled_cluster();  // outside run(): the bundled file must read
  return fuzz::run([&] {
    check_fast_json(fuzz::text(data, size));
    check_fast_matrix(fuzz::text(data, size));
    for (const auto& d : parse_documents(fuzz::text(data, size), "fuzz", kKinds)) read_one(d);
  });
}
