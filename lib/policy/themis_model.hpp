// What the Themis policy (themis.cpp) knows of a job and of the cluster's capacity, free
// of the auction: where the job can run as one gang, how fast, and its ideal finish time.
//
// Capacity rows: per GPU type and power-of-two size class s = 1, 2, 4, ... up to the
// largest virtual node (configuration.hpp). The s = 1 row counts GPUs; a row s >= 2 counts
// the GPUs of blocks of size >= s: a gang's whole nodes as whole-node blocks, its
// remainder rounded up to a power of two (a remainder wider than the largest virtual node
// as a whole node). Gangs within every row can be placed on empty nodes (first-fit
// decreasing); beside running gangs the placer has the last word (themis.cpp checks).
//
// Gangs: a row's tuned fixed configuration on every type that holds it (row.fixed, the
// "+TJ" setting), else each of the row's entries. A gang's rate is in iterations at the
// initial batch per second, the unit of progress: raw_goodput / model.init_batch_size
// (entries without a measured rate, source "default", count their normalised goodput;
// without an initial batch size the rate is the goodput itself).
//
// Ideal time (Themis, Mahajan et al., NSDI '20, with Sia's Eq. 3 for several types):
//   T_id = 1 / sum_t (N_t / N) / T_id,t over the types the job can run on (weights
//   renormalised), T_id,t = total / rate_t(s_t), s_t = min(gang, N_t / N_avg), interpolated
//   in time between floor(s_t) and ceil(s_t) (s_t < 1: T_id,t(1) / s_t), N_t the type's GPUs.
//   rate_t(n) for a fixed configuration: the fixed entry's rate at the gang; below it the
//   job's fitted model on t (GoodputFunction::fixed_batch at the tuned batch) scaled to
//   agree with the fixed entry at the gang, or linear scaling where the type has no fitted
//   model; on a type without a fixed entry (the gang does not fit), the model alone. Rows
//   without a fixed configuration interpolate their entries' rates linearly in GPUs (and
//   linearly from zero below the smallest).
// Thread-safety: pure functions.
#pragma once

#include <utility>
#include <vector>

#include "core/cluster.hpp"
#include "core/configuration.hpp"
#include "core/goodput_matrix.hpp"

namespace sia {

struct ThemisRow {
  int type = 0;
  int size = 1;  // the size class
  double capacity = 0;
};

using ThemisUsage = std::vector<std::pair<int, int>>;  // (row, amount)

std::vector<ThemisRow> themis_rows(const Cluster& cluster);
ThemisUsage themis_usage(const std::vector<ThemisRow>& rows, const Cluster& cluster,
                         const Config& config);

struct ThemisGang {
  Config config;
  const GoodputEntry* entry = nullptr;  // in the row it was made from
  double rate = 0;                      // iterations (at the initial batch) per second
  ThemisUsage usage;
};

// The gangs of `row` that fit the cluster, in the row's order.
std::vector<ThemisGang> themis_gangs(const GoodputRow& row, const Cluster& cluster,
                                     const std::vector<ThemisRow>& rows);

// rate_t(n) as T_id uses it (the header's rules): iterations per second on `gpus` GPUs of
// `type`; 0 where the job cannot run there.
double themis_rate(const GoodputRow& row, const Cluster& cluster,
                   const std::vector<ThemisGang>& gangs, int type, int gpus);

// T_id in seconds for `total` iterations; infinity when the job can run nowhere.
double themis_ideal_time(const GoodputRow& row, const Cluster& cluster,
                         const std::vector<ThemisGang>& gangs, double n_avg, double total);

}  // namespace sia
