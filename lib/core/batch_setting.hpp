// BatchSetting: the batch a data-parallel job trains with, as one value -- the global batch
// (samples per optimizer step), the local batch (samples per GPU per micro-step) and the
// accumulation steps. "accum_steps" counts EXTRA micro-steps: a step is accum_steps + 1
// micro-steps (micro_steps()); this is the one definition every module uses.
// The invariant: global = local x replicas x (accum_steps + 1), where replicas is the number
// of data-parallel ranks (a pipeline job's pipelines). It is checked once at each boundary
// that knows the replicas (a launch, the worker's environment, a batch plan) by
// batch_mismatch(); documents between the stages (GoodputMatrix, Allocation, Placement)
// carry the setting as the policy chose it (a policy's fallback may name a requested global
// batch its split rounds up).
// On the wire (sia-formats(5), sia-worker(7)) the three numbers keep their names:
// "batch_size" (a number; documents write it as a float, 96.0, as they always have),
// "local_bsz" and "accum_steps" (integers). Products are computed without wrapping: one
// over kMaxGlobalBatch is refused with one line.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sia {

class Node;

inline constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 40;  // samples in one step
inline constexpr int kMaxAccumSteps = 1 << 20;                          // extra micro-steps

struct BatchSetting {
  std::int64_t global = 0;  // "batch_size": samples per optimizer step (0: none)
  int local = 0;            // "local_bsz": samples per GPU per micro-step (0: none)
  int accum_steps = 0;      // "accum_steps": extra micro-steps per optimizer step

  int micro_steps() const { return accum_steps + 1; }
  bool empty() const { return global == 0 && local == 0; }
  bool operator==(const BatchSetting&) const = default;
};

// local x replicas x (accum_steps + 1), or nullopt when an operand is negative or the
// product exceeds kMaxGlobalBatch (never a wrapped value).
std::optional<std::int64_t> batch_product(std::int64_t local, std::int64_t replicas,
                                          std::int64_t accum_steps);

// The setting that trains `local` samples on each of `replicas` ranks for accum_steps + 1
// micro-steps. Throws sia::Error (status 65) with one line when the product overflows.
BatchSetting batch_of(int local, std::int64_t replicas, int accum_steps);

// The invariant: "" when the setting holds global = local x replicas x (accum_steps + 1),
// else why not ("batch_size 100 is not local_bsz 16 x 3 replicas x (accum_steps 1 + 1) =
// 96").
std::string batch_mismatch(const BatchSetting& b, std::int64_t replicas);

// A wire batch_size (a JSON number, possibly written 96.0) as a count of samples: nullopt
// unless it is integral and within [0, kMaxGlobalBatch].
std::optional<std::int64_t> global_batch_of(double wire);

// Adds "batch_size", "local_bsz" and "accum_steps" to the object `obj`.
void put_batch_setting(nlohmann::json& obj, const BatchSetting& b);
// Reads the three fields of the object `n` (each optional, 0 when absent); a bad value throws
// naming the field ("placement.json: data.jobs[0].batch_size: expected a whole number of
// samples from 0 to 1099511627776, got the number 96.5").
BatchSetting parse_batch_setting(const Node& n);

// The fields that differ ("batch_size 64 -> 128; local_bsz 16 -> 32"), or "".
std::string batch_change(const BatchSetting& from, const BatchSetting& to);

}  // namespace sia
