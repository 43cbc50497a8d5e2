// How the placer of the Sia paper's artifact (Subramanya et al., SOSP '23) differs from
// this project's, one named flag per difference; placer_quirks() sets them from the
// profile, all on for Compat::reference, none for the default. place() with quirks
// (place/placer.hpp) is the one place that reads them.
// Thread-safety: plain values.
#pragma once

#include "core/compat.hpp"

namespace sia {

struct PlacerQuirks {
  // The published simulator's fast placer (reference_placement): jobs by GPU count, whole
  // nodes then any free GPUs round-robin from a moving pointer, so small jobs may span
  // nodes and nothing running is preserved. This project's placer keeps running jobs on
  // their GPUs and never splits a partial-node job, which saves restarts; the artifact's
  // numbers were measured with the fast one.
  bool round_robin = false;
};

// The quirks of a profile: none for Compat::standard, all for Compat::reference.
PlacerQuirks placer_quirks(Compat compat);

}  // namespace sia
