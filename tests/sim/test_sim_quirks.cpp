#include <catch2/catch.hpp>

#include "sim/sim_quirks.hpp"

using namespace sia;

TEST_CASE("the reference profile turns every simulator quirk on, the default none", "[simulator]") {
  const SimQuirks none = sim_quirks(Compat::standard);
  const SimQuirks all = sim_quirks(Compat::reference);
  const bool SimQuirks::*flags[] = {
      &SimQuirks::moves_by_node_only,      &SimQuirks::spread_past_profiled_nodes,
      &SimQuirks::restart_on_shape_change, &SimQuirks::true_rates_for_baselines,
      &SimQuirks::no_profile_store,        &SimQuirks::whole_round_gpu_seconds,
      &SimQuirks::rho_of_mean_isolated,    &SimQuirks::p99_by_index};
  for (auto f : flags) {
    CHECK_FALSE(none.*f);
    CHECK(all.*f);
  }
  static_assert(sizeof(SimQuirks) == sizeof(flags) / sizeof(flags[0]), "a flag not listed here");
}
