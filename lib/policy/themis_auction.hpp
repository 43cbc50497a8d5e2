// The Themis arbiter's one-shot partial-allocation auction (Mahajan et al., NSDI '20
// §3.3.1, and its fallback), free of policy details.
// Apps bid for bundles of GPUs; a bid has a weight w = ln(rho_old / rho_new) > 0 and uses
// some amount of a few capacity rows. The proportional-fair (PF) allocation picks at most
// one bid per app within every row's capacity so that the sum of the chosen weights (the
// log of the Nash social welfare, prod rho_old / rho_new) is maximal, ties broken towards
// fewer GPUs, then fewer nodes (epsilon penalties 1e-7 per GPU, 1e-8 per node). It is one
// binary ILP solved by GLPK's branch and cut (presolve on, within the limits: nodes per
// solve, and the time limit when there is one).
// Hidden payments (Cole, Gkatzelis and Goel, EC '13): for every winner i the ILP is solved
// again with i's columns fixed to 0, giving OPT_{-i}, and
//     c_i = exp((OPT - w_i*) - OPT_{-i})   clamped to [0, 1],
// the others' welfare with i present over their welfare without it; i receives c_i of its
// bundle. OPT - w_i* is feasible without i, so a solve that returns less (a limit) sets
// c_i = 1 and records a warning. One bidder: c = 1 exactly. 1 + |winners| solves.
// Fallback when GLPK finds no integer solution (or use_glpk is off): bids greedily by
// w / GPUs, feasibility and one bid per app kept, payments with the same greedy (not
// strategy-proof; recorded in `status`).
// Thread-safety: run_auction is re-entrant.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policy/solve_limits.hpp"

namespace sia {

struct AuctionBid {
  int app = 0;        // the bidder, 0 .. apps - 1
  double weight = 0;  // ln(rho_old / rho_new); bids with weight <= 0 are ignored
  int gpus = 0;       // tie-break: fewer GPUs
  int nodes = 0;      // tie-break: fewer nodes
  std::vector<std::pair<int, int>> usage;  // (row, amount)
};

struct AuctionProblem {
  int apps = 0;
  std::vector<double> capacity;  // per row
  std::vector<AuctionBid> bids;
};

struct AuctionOptions {
  // seconds: for all the solves together (infinity: none); nodes: per solve.
  SolveLimits limits{2.0, 0, 0};
  double mip_gap = 1e-6;
  bool payments = true;  // false: c = 1 for every winner (the authors' simulator)
  bool use_glpk = true;  // false: the greedy fallback
};

struct AuctionResult {
  std::vector<int> pick;        // per app: the winning bid's index into bids, or -1
  std::vector<double> payment;  // per app: c_i (1 for apps that did not win)
  double opt = 0;               // sum of the chosen weights (no epsilon terms)
  int solves = 0;
  std::string status;  // "optimal", "time-limit" (an incumbent only: a limit, time or
                       // nodes, ended the search), "greedy"
  std::vector<std::string> warnings;
};

AuctionResult run_auction(const AuctionProblem& problem, const AuctionOptions& options);

// Whether `pick` (per app, -1 = none) respects every row and gives each app at most its
// own bids. For tests.
bool auction_feasible(const AuctionProblem& problem, const std::vector<int>& pick);

}  // namespace sia
