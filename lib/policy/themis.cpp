// The Themis policy (Mahajan et al., NSDI '20), as the Sia paper (Subramanya et al.,
// SOSP '23) ran it as a baseline. A job is an app of one unless its row names a
// multi-job app (a search): then the app bids as one unit with one rho (§4.3.2,
// themis_app.hpp) and its win is divided among its waiting trials, most remaining work
// first, each on its fastest gang; N_avg counts apps. A job's unit of allocation is a whole
// gang: the tuned fixed
// configuration on one GPU type ("Themis+TJ"), or one of the entries of a row without one
// (themis_model.hpp). One allocate() call is one round:
//   0. Leases whose end has come are released; the GPUs no lease holds are the offer.
//   1. rho_old of every job that holds no lease and can run somewhere, as if it waited one
//      lease L and then ran on its fastest gang (§5 step 1):
//      rho_old = (age + L + remaining / best rate) / T_id.
//   2. The k = max(1, floor((1 - f) n + 1e-9)) of those n jobs with the largest rho_old
//      bid; the others are outside the auction.
//   3. A bidder bids each gang that fits the offer and lowers its rho:
//      w = ln(rho_old / rho_new), rho_new = T_sh / T_id, T_sh = age + remaining / rate.
//   4-5. The PF auction with hidden payments (themis_auction.hpp).
//   6. A winner gets its whole gang, on a lease of c_i * L.
//   7. Leftovers: the jobs outside the auction in a seeded random order, then the losing
//      bidders, each take the gang with the lowest rho_new that fits what is left, on a
//      lease of L. Winners take nothing more, so their payment stands.
// Progress and remaining work are in iterations at the initial batch (row.progress);
// N_avg is the mean of the matrix's job count over the rounds the job was active.
// Choices where the paper and the spec are silent:
//   - Capacity is counted per GPU type and size class (themis_model.hpp), not per node:
//     the policy chooses gangs, the placer places them. The answer is then placed with the
//     placer (place.hpp) beside the last answer's placement, as the simulator does; a gang
//     granted this round that the placer cannot place beside the running ones (it needs
//     whole nodes where other gangs' remainders sit) gives its grant back -- as does the
//     last grant on a type where a held gang was evicted and not placed again -- and the
//     leftover step runs again on what it freed (three times at most, then grants are only
//     taken back). Not with PolicyQuirks::themis_unchecked_grants (--compat reference),
//     whose placer never refuses.
//   - Leases are per job and in whole rounds (options.round, default 360 s): a lease of
//     c * L seconds lasts floor(x) or ceil(x) rounds, x = c * L / round, the longer one with
//     probability x - floor(x) (seeded), and at least one round -- so L = 600 s at 360 s
//     rounds lasts 600 s on average, and a payment shortens it by the factor c on average.
//   - A lease ends early when the job reports another configuration, or none a round
//     after the grant (it did not start); a non-preemptible running job keeps its
//     configuration round after round.
//   - T_sh adds the row's restart penalty to gangs other than the job's current one: a
//     move costs a checkpoint-restore.
//   - Jobs without progress information are valued as if one hour of work on their best
//     gang remained and none was done.
//   - Rank ties: larger age, then name; jobs whose rho_old ties (within 1e-12 relative)
//     across the cut are taken in a seeded random order. Among a bidder's gangs a larger
//     one must beat every smaller one (dominated bids dropped), at most 32 bids per job.
//   - The leftover step gives a job the fitting gang with the lowest rho_new even when it
//     does not beat rho_old: an idle GPU helps nobody.
//   - GLPK gets options.time_limit for a round's solves together (half for the PF solve;
//     none in the simulator) and options.node_limit nodes per solve, at the spec's MIP gap
//     of 1e-6 (not options.mip_gap, Sia's).
//   - The round's random numbers come from std::mt19937 seeded with (options.seed, round),
//     so a one-shot sia-solve --previous round draws what the simulator's does.
// policy_state: themis_state.hpp.
// Thread-safety: as Policy.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "core/app_spec.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "core/node.hpp"
#include "model/goodput.hpp"
#include "place/placer.hpp"
#include "policy/baselines.hpp"
#include "policy/fairness_estimate.hpp"
#include "policy/themis_app.hpp"
#include "policy/themis_auction.hpp"
#include "policy/themis_model.hpp"
#include "policy/themis_state.hpp"

namespace sia {

namespace {

using json = nlohmann::json;

constexpr double kDefaultRound = 360;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool fits(const std::vector<std::pair<int, int>>& usage, const std::vector<double>& room) {
  for (auto [row, amount] : usage) {
    if (amount > room[row] + 1e-9) return false;
  }
  return true;
}

void take(const std::vector<std::pair<int, int>>& usage, std::vector<double>& room, int sign) {
  for (auto [row, amount] : usage) room[row] -= sign * amount;
}

using themis::Lease;
using themis::Memory;
using themis::State;
using themis::state_from_text;
using themis::state_to_text;

Lease lease_of(const Cluster& cluster, const Config& c, long long start, long long end,
               double payment, const char* how) {
  return Lease{cluster.types[c.type].name, c.nodes, c.gpus, start, end, payment, how};
}

// ---------------------------------------------------------------------------------------
// The policy.

enum class Role { none, leased, participant, outside };

struct JobView {
  const GoodputRow* row = nullptr;
  std::vector<ThemisGang> cands;
  double done = 0, total = 0;
  double t_id = kInf;
  double best_rate = 0;
  double rho_old = 0;
  Role role = Role::none;
  int held = -1;  // candidate index under lease (or granted this round)
  bool won = false;
  bool unplaceable = false;  // its grant could not be placed this round
  std::string reason;

  double remaining() const { return std::max(0.0, total - done); }
  double t_sh(const ThemisGang& c) const {
    double t = row->age + remaining() / c.rate;
    if (row->current && *row->current != c.config) t += row->restart_penalty;
    return t;
  }
  double rho(const ThemisGang& c) const { return t_sh(c) / t_id; }
};

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// ---------------------------------------------------------------------------------------
// Apps of several trials (Themis §4.3.2): one rho for the app, from its successive-halving
// schedule (each hyperband bracket's with a trial in the matrix) and the median iteration time of
// its trials (themis_app.hpp).

struct AppUnit {
  std::vector<std::size_t> trials;   // every trial in the matrix
  std::vector<std::size_t> waiting;  // those that hold no lease and can run, by name
  ThemisApp model;
  double cluster_gpus = 0, n_avg = 1;
  int max_demand = 1, held_gpus = 0;
  double rho_old = 0;

  double rho(int gpus) const {
    return themis_app_rho(model, gpus, cluster_gpus, n_avg, max_demand);
  }
};

// The trial's fastest gang.
int best_gang(const JobView& v) {
  int best = -1;
  for (std::size_t c = 0; c < v.cands.size(); ++c) {
    if (best < 0 || v.cands[c].rate > v.cands[best].rate) best = static_cast<int>(c);
  }
  return best;
}

// Fills the app's model; false when it has no waiting trial or no finite ideal time.
bool build_app_unit(AppUnit& u, const std::vector<JobView>& views, const Cluster& cluster,
                    const State& state, double lease) {
  std::vector<ThemisTrial> trials;
  for (std::size_t i : u.trials) {
    const JobView& v = views[i];
    const int b = best_gang(v);
    if (b < 0) continue;
    if (v.role == Role::leased) {
      u.held_gpus += v.cands[v.held].config.gpus;
    } else {
      u.waiting.push_back(i);
    }
    trials.push_back(
        {*v.row->app, v.done, v.total, v.row->age, v.cands[b].config.gpus, v.cands[b].rate});
  }
  if (u.waiting.empty() || trials.empty()) return false;
  int started = 0;
  u.model = themis_app_model(trials, &started);
  u.cluster_gpus = cluster.total_gpus();
  const auto mem = state.jobs.find(views[u.waiting.front()].row->job);
  if (mem != state.jobs.end() && mem->second.rounds > 0) {
    u.n_avg = mem->second.contention_sum / static_cast<double>(mem->second.rounds);
  }
  u.max_demand = std::min(cluster.total_gpus(), started * u.model.gpus_per_trial);
  const double t_id = themis_app_ideal_time(u.model, u.cluster_gpus, u.n_avg, u.max_demand);
  if (!(t_id > 0) || !std::isfinite(t_id)) return false;
  // Holding nothing: wait one lease, then run on the fair share (§5 step 1).
  const int share = std::max(u.model.gpus_per_trial,
                             std::min(u.max_demand, static_cast<int>(u.cluster_gpus / u.n_avg)));
  u.rho_old = u.held_gpus > 0
                  ? u.rho(u.held_gpus)
                  : (u.model.elapsed + lease + themis_app_remaining(u.model, share)) / t_id;
  return true;
}

struct AppBid {
  AuctionBid bid;
  std::vector<std::pair<std::size_t, int>> gangs;  // (view, candidate)
};

// The app's bids: its first q waiting trials, most remaining work first, each on its
// fastest gang that still fits, for q = 1, 2, ...; a bid must lower the app's rho below
// rho_old and below every smaller bid's (32 bids at most).
std::vector<AppBid> app_bids(const AppUnit& u, const std::vector<JobView>& views,
                             const std::vector<double>& room_in) {
  std::vector<std::size_t> order = u.waiting;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return views[a].remaining() > views[b].remaining();
  });
  std::vector<AppBid> out;
  std::vector<double> room = room_in;
  AppBid cur;
  std::map<int, int> usage;
  double last = u.rho_old;
  for (std::size_t i : order) {
    const JobView& v = views[i];
    int pick = -1;
    for (std::size_t c = 0; c < v.cands.size(); ++c) {
      if (!fits(v.cands[c].usage, room)) continue;
      if (pick < 0 || v.cands[c].rate > v.cands[pick].rate) pick = static_cast<int>(c);
    }
    if (pick < 0) continue;
    take(v.cands[pick].usage, room, +1);
    for (auto [row, amount] : v.cands[pick].usage) usage[row] += amount;
    cur.gangs.push_back({i, pick});
    cur.bid.gpus += v.cands[pick].config.gpus;
    cur.bid.nodes += v.cands[pick].config.nodes;
    const double rho = u.rho(u.held_gpus + cur.bid.gpus);
    if (!(rho < last * (1 - 1e-9))) continue;
    last = rho;
    AppBid b = cur;
    b.bid.weight = std::log(u.rho_old / std::max(rho, 1e-12));
    b.bid.usage.assign(usage.begin(), usage.end());
    out.push_back(std::move(b));
    if (out.size() >= 32) break;
  }
  return out;
}

class ThemisPolicy : public Policy {
 public:
  explicit ThemisPolicy(PolicyOptions o) : o_(o) {
    if (!(o_.round > 0)) o_.round = kDefaultRound;
  }
  std::string name() const override { return "themis"; }
  Allocation allocate(const GoodputMatrix& m, const std::optional<Allocation>& previous) override;

 private:
  struct Round;

  int lease_rounds(double c, std::mt19937& rng) const {
    const double x = std::max(0.0, c) * o_.themis_lease / o_.round;
    int k = static_cast<int>(std::floor(x + 1e-9));
    const double frac = x - k;
    if (frac > 1e-9 && std::uniform_real_distribution<double>(0, 1)(rng) < frac) ++k;
    return std::max(1, k);
  }

  PolicyOptions o_;
  State state_;
  std::string last_text_;
};

// The generator of a round: seeded with the policy's seed and the round number.
std::mt19937 round_rng(unsigned seed, long long round) {
  std::seed_seq seq{seed, static_cast<unsigned>(round & 0xffffffff),
                    static_cast<unsigned>(round >> 32)};
  return std::mt19937(seq);
}

// One allocate() call: the round's working state, and its steps (the paper's numbering) as
// methods that allocate() calls in order. Every step draws from the one generator in the
// same order, so a round's answer depends on the seed, the round and the matrix only.
struct ThemisPolicy::Round {
  Round(ThemisPolicy& policy, const GoodputMatrix& matrix)
      : p(policy),
        state(policy.state_),
        o(policy.o_),
        m(matrix),
        cluster(matrix.cluster),
        round(++state.round),
        rng(round_rng(static_cast<unsigned>(o.seed), round)),
        rows(themis_rows(cluster)) {}

  void remember_jobs();
  void build_views();
  void renew_leases();
  void form_apps();
  void rank();
  void collect_bids();
  void add_job_bids(std::size_t i, int app);
  void grant_winners();
  void serve(std::vector<std::size_t> order);
  void serve_leftovers();
  Allocation answer() const;
  Allocation place_grants(Allocation out);
  Allocation finish(Allocation out);

  // The view's unit: the trials of the app it leads, else itself.
  std::vector<std::size_t> members(std::size_t i) const {
    auto it = lead_of.find(i);
    return it == lead_of.end() ? std::vector<std::size_t>{i} : it->second->waiting;
  }

  ThemisPolicy& p;
  State& state;
  const PolicyOptions& o;
  const GoodputMatrix& m;
  const Cluster& cluster;
  const long long round;
  std::mt19937 rng;
  const std::vector<ThemisRow> rows;
  std::vector<JobView> views;
  std::vector<double> room;  // capacity left per row
  double offered = 0;        // single-GPU-row capacity left after the leases
  std::map<std::string, AppUnit> apps;
  std::map<std::size_t, AppUnit*> lead_of;  // lead view -> its app
  std::vector<std::size_t> wanting;         // by rho_old, worst first
  std::size_t n = 0, k = 0;                 // wanting; of them, the bidders
  AuctionProblem prob;
  std::vector<std::size_t> app_job;                                 // auction app -> view
  std::vector<std::vector<std::pair<std::size_t, int>>> bid_gangs;  // bid -> (view, candidate)
  AuctionResult auction;
  std::vector<std::size_t> granted;  // this round's grants, in order
  std::vector<std::size_t> outside, losers;
  int winners = 0, leftover = 0, unplaced = 0;
  double min_c = 1;
};

// Forgets finished jobs; counts this round in every active job's N_avg.
void ThemisPolicy::Round::remember_jobs() {
  // N counts apps (§1.1): a search's trials are one app, a job without one is its own.
  const double njobs = fairness_units(m);
  std::map<std::string, Memory> kept;
  for (const GoodputRow& row : m.jobs) {
    Memory mem;
    if (auto it = state.jobs.find(row.job); it != state.jobs.end()) mem = it->second;
    mem.contention_sum += njobs;
    mem.rounds += 1;
    kept[row.job] = std::move(mem);
  }
  state.jobs = std::move(kept);
}

void ThemisPolicy::Round::build_views() {
  views.resize(m.jobs.size());
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    JobView& v = views[i];
    const GoodputRow& row = m.jobs[i];
    v.row = &row;
    v.cands = themis_gangs(row, cluster, rows);
    for (const ThemisGang& c : v.cands) v.best_rate = std::max(v.best_rate, c.rate);
    if (row.progress && row.progress->total > 0) {
      v.done = row.progress->done;
      v.total = row.progress->total;
    } else {
      v.total = v.best_rate * 3600;
    }
    const Memory& mem = state.jobs[row.job];
    const double n_avg = mem.contention_sum / static_cast<double>(std::max(1LL, mem.rounds));
    v.t_id = themis_ideal_time(row, cluster, v.cands, n_avg, v.total);
    if (v.cands.empty()) v.reason = "no configuration of this job fits the cluster";
  }
}

// Step 0: leases. Expired ones end; ones the job no longer runs on are dropped; held ones
// beyond capacity (the cluster shrank) too, the newest first.
void ThemisPolicy::Round::renew_leases() {
  room.resize(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) room[r] = rows[r].capacity;
  std::vector<std::size_t> holders;
  for (std::size_t i = 0; i < views.size(); ++i) {
    JobView& v = views[i];
    Memory& mem = state.jobs[v.row->job];
    const GoodputRow& row = *v.row;
    if (!mem.lease && !row.preemptible && row.current) {
      mem.lease = lease_of(cluster, *row.current, round, round + 1, 1.0, "pinned");
    }
    if (!mem.lease) continue;
    Lease& l = *mem.lease;
    int cand = -1;
    const int t = cluster.type_index(l.gpu_type);
    for (std::size_t c = 0; c < v.cands.size() && t >= 0; ++c) {
      if (v.cands[c].config == Config{t, l.nodes, l.gpus}) cand = static_cast<int>(c);
    }
    const bool moved = row.current && (cand < 0 || *row.current != v.cands[cand].config);
    const bool missing = !row.current && l.start < round;
    if (cand < 0 || moved || missing) {
      mem.lease.reset();
      continue;
    }
    if (l.end <= round) {
      if (row.preemptible || !row.current) {
        mem.lease.reset();
        continue;
      }
      l.end = round + 1;  // a non-preemptible job keeps running
    }
    v.held = cand;
    holders.push_back(i);
  }
  std::sort(holders.begin(), holders.end(), [&](std::size_t a, std::size_t b) {
    const Lease& la = *state.jobs[views[a].row->job].lease;
    const Lease& lb = *state.jobs[views[b].row->job].lease;
    if (la.start != lb.start) return la.start < lb.start;
    return views[a].row->job < views[b].row->job;
  });
  for (std::size_t i : holders) {
    JobView& v = views[i];
    const auto& usage = v.cands[v.held].usage;
    if (fits(usage, room)) {
      take(usage, room, +1);
      v.role = Role::leased;
    } else {
      state.jobs[v.row->job].lease.reset();
      v.held = -1;
    }
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size == 1) offered += room[r];
  }
}

// Apps of several trials bid as one unit with one rho (§4.3.2): the unit is represented
// by its first waiting trial (its lead); the others follow its role.
void ThemisPolicy::Round::form_apps() {
  for (std::size_t i = 0; i < views.size(); ++i) {
    if (views[i].row->app) apps[views[i].row->app->name].trials.push_back(i);
  }
  for (auto& [name, unit] : apps) {
    if (build_app_unit(unit, views, cluster, state, o.themis_lease))
      lead_of[unit.waiting.front()] = &unit;
  }
}

// Steps 1-2: rank the jobs (and apps) that want GPUs by rho_old and keep the top (1 - f);
// a tie across the cut is broken at random.
void ThemisPolicy::Round::rank() {
  for (std::size_t i = 0; i < views.size(); ++i) {
    JobView& v = views[i];
    if (v.role == Role::leased || v.cands.empty()) continue;
    if (v.row->app && !lead_of.count(i)) continue;  // a trial: its app's lead stands for it
    if (auto it = lead_of.find(i); it != lead_of.end()) {
      v.rho_old = it->second->rho_old;
    } else {
      v.rho_old = (v.row->age + o.themis_lease + v.remaining() / v.best_rate) / v.t_id;
    }
    if (!std::isfinite(v.rho_old)) v.rho_old = std::numeric_limits<double>::max();
    wanting.push_back(i);
  }
  std::sort(wanting.begin(), wanting.end(), [&](std::size_t a, std::size_t b) {
    if (views[a].rho_old != views[b].rho_old) return views[a].rho_old > views[b].rho_old;
    if (views[a].row->age != views[b].row->age) return views[a].row->age > views[b].row->age;
    return views[a].row->job < views[b].row->job;
  });
  n = wanting.size();
  k = n == 0 ? 0
             : std::max<std::size_t>(
                   1, static_cast<std::size_t>(std::floor((1 - o.themis_f) * n + 1e-9)));
  if (k > 0 && k < n) {
    auto tied = [&](std::size_t a, std::size_t b) {
      const double x = views[a].rho_old, y = views[b].rho_old;
      return std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y));
    };
    if (tied(wanting[k - 1], wanting[k])) {
      std::size_t lo = k - 1, hi = k;
      while (lo > 0 && tied(wanting[lo - 1], wanting[k])) --lo;
      while (hi + 1 < n && tied(wanting[hi + 1], wanting[k])) ++hi;
      std::shuffle(wanting.begin() + lo, wanting.begin() + hi + 1, rng);
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i : members(wanting[r])) {
      views[i].role = r < k ? Role::participant : Role::outside;
      views[i].rho_old = views[wanting[r]].rho_old;
    }
  }
}

// Steps 3-4: the bids of the top k, an app's from app_bids.
void ThemisPolicy::Round::collect_bids() {
  prob.capacity = room;
  for (std::size_t r = 0; r < k && offered > 0; ++r) {
    const std::size_t i = wanting[r];
    const int app = static_cast<int>(app_job.size());
    app_job.push_back(i);
    if (auto it = lead_of.find(i); it != lead_of.end()) {
      for (AppBid& b : app_bids(*it->second, views, room)) {
        b.bid.app = app;
        prob.bids.push_back(std::move(b.bid));
        bid_gangs.push_back(std::move(b.gangs));
      }
      continue;
    }
    add_job_bids(i, app);
  }
  prob.apps = static_cast<int>(app_job.size());
}

// A job's bids: its candidates that fit, best rho first; a larger gang must beat every
// smaller one (32 bids at most).
void ThemisPolicy::Round::add_job_bids(std::size_t i, int app) {
  const JobView& v = views[i];
  std::vector<std::pair<double, int>> ok;
  for (std::size_t c = 0; c < v.cands.size(); ++c) {
    const double rho = v.rho(v.cands[c]);
    if (rho < v.rho_old * (1 - 1e-9) && fits(v.cands[c].usage, room)) {
      ok.push_back({rho, static_cast<int>(c)});
    }
  }
  std::sort(ok.begin(), ok.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return v.cands[a.second].config.gpus < v.cands[b.second].config.gpus;
  });
  int kept_bids = 0;
  for (const auto& [rho, c] : ok) {
    bool dominated = false;
    for (const auto& [rho2, c2] : ok) {
      dominated |= v.cands[c2].config.gpus < v.cands[c].config.gpus && rho2 <= rho;
    }
    if (dominated || kept_bids >= 32) continue;
    AuctionBid bid;
    bid.app = app;
    bid.weight = std::log(v.rho_old / std::max(rho, 1e-12));
    bid.gpus = v.cands[c].config.gpus;
    bid.nodes = v.cands[c].config.nodes;
    bid.usage = v.cands[c].usage;
    prob.bids.push_back(std::move(bid));
    bid_gangs.push_back({{i, c}});
    ++kept_bids;
  }
}

// Step 6 (Mode B) and step 8: winners take the whole gang on a lease of c * L.
void ThemisPolicy::Round::grant_winners() {
  for (int a = 0; a < prob.apps; ++a) {
    const int b = auction.pick[a];
    if (b < 0) {
      for (std::size_t i : members(app_job[a])) {
        views[i].reason = fmt("lost the auction (rho %.3g)", views[i].rho_old);
      }
      continue;
    }
    // An app's win is divided among its trials as its bid said (§4.3.2).
    const double pay = auction.payment[a];
    const int rounds = p.lease_rounds(pay, rng);
    for (const auto& [i, c] : bid_gangs[b]) {
      JobView& v = views[i];
      v.held = c;
      v.won = true;
      take(v.cands[c].usage, room, +1);
      const Config& cfg = v.cands[c].config;
      state.jobs[v.row->job].lease = lease_of(cluster, cfg, round, round + rounds, pay, "auction");
      granted.push_back(i);
    }
    for (std::size_t i : members(app_job[a])) views[i].won = true;
    ++winners;
    min_c = std::min(min_c, pay);
  }
  for (int a = 0; a < prob.apps; ++a) {
    JobView& v = views[app_job[a]];
    if (v.held < 0 && auction.pick[a] < 0) {
      bool any = false;
      for (const ThemisGang& c : v.cands) any |= fits(c.usage, prob.capacity);
      if (!any) v.reason = fmt("its gang does not fit the %g GPUs offered", offered);
    }
  }
}

// Step 7's taker: the jobs of `order`, shuffled, each take the gang of the lowest rho (then
// fewest GPUs) that fits what is left, on a lease of L.
void ThemisPolicy::Round::serve(std::vector<std::size_t> order) {
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i : order) {
    JobView& v = views[i];
    if (v.held >= 0 || v.unplaceable) continue;
    int best = -1;
    for (std::size_t c = 0; c < v.cands.size(); ++c) {
      if (!fits(v.cands[c].usage, room)) continue;
      if (best < 0) {
        best = static_cast<int>(c);
        continue;
      }
      const double r1 = v.rho(v.cands[c]), r0 = v.rho(v.cands[best]);
      if (r1 < r0 || (r1 == r0 && v.cands[c].config.gpus < v.cands[best].config.gpus)) {
        best = static_cast<int>(c);
      }
    }
    if (best < 0) continue;
    v.held = best;
    take(v.cands[best].usage, room, +1);
    const Config& cfg = v.cands[best].config;
    state.jobs[v.row->job].lease =
        lease_of(cluster, cfg, round, round + p.lease_rounds(1.0, rng), 1.0, "leftover");
    ++leftover;
    granted.push_back(i);
  }
}

// Step 7: leftovers to the jobs outside the auction, then to the losing bidders.
void ThemisPolicy::Round::serve_leftovers() {
  for (std::size_t u : wanting) {
    for (std::size_t i : members(u)) {
      if (views[i].role == Role::outside) outside.push_back(i);
      if (views[i].role == Role::participant && !views[i].won) losers.push_back(i);
    }
  }
  serve(outside);
  serve(losers);
}

// The allocation the views hold now, with a reason for every job left without GPUs.
Allocation ThemisPolicy::Round::answer() const {
  Allocation out;
  out.cluster = cluster;
  out.policy = "themis";
  out.status = auction.status == "greedy" ? "feasible" : auction.status;
  out.objective = out.bound = auction.opt;
  for (const JobView& v : views) {
    JobAllocation ja;
    ja.job = v.row->job;
    if (v.held >= 0) {
      const GoodputEntry& e = *v.cands[v.held].entry;
      ja.config = e.config;
      ja.batch = e.batch;
      ja.goodput = e.goodput;
    } else if (!v.reason.empty()) {
      ja.reason = v.reason;
    } else if (offered <= 0) {
      ja.reason = "every GPU is leased";
    } else if (v.role == Role::outside) {
      ja.reason =
          fmt("not in the auction (rho %.3g, the top %g of %g jobs bid); "
              "no leftover fits its gang",
              v.rho_old, static_cast<double>(k), static_cast<double>(n));
    } else {
      ja.reason = "no room for its gang";
    }
    out.jobs.push_back(std::move(ja));
  }
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  return out;
}

// The answer, checked against the placer: a gang granted this round that cannot be placed
// beside the running ones (it needs whole nodes where remainders of other gangs sit) gives
// its grant back, and what it leaves goes to the next leftover takers.
Allocation ThemisPolicy::Round::place_grants(Allocation out) {
  if (state.placement && state.placement->cluster_name != cluster.name) {
    state.placement.reset();
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < views.size(); ++i) index[views[i].row->job] = i;
  Placement placed;
  auto fresh = [&](std::size_t i) {  // granted this round (not a pin)
    const Memory& mem = state.jobs[views[i].row->job];
    return views[i].held >= 0 && mem.lease && mem.lease->start == round &&
           mem.lease->how != "pinned";
  };
  auto revoke = [&](std::size_t i) {
    JobView& v = views[i];
    take(v.cands[v.held].usage, room, -1);
    state.jobs[v.row->job].lease.reset();
    v.held = -1;
    v.unplaceable = true;
    v.reason = "granted, but its gang cannot be placed beside the running ones";
  };
  for (int pass = 0;; ++pass) {
    placed = place(out, cluster, state.placement);
    int revoked = 0;
    std::vector<int> stranded;  // types on which a held gang was left without GPUs
    for (const std::string& name : placed.waiting) {
      auto it = index.find(name);
      if (it == index.end() || views[it->second].held < 0) continue;
      if (fresh(it->second)) {
        revoke(it->second);
        ++revoked;
      } else {
        stranded.push_back(views[it->second].cands[views[it->second].held].config.type);
      }
    }
    // A held gang evicted for a new one and not placed again: the last grant on its type
    // gives way.
    for (int type : stranded) {
      if (revoked > 0) break;
      for (auto g = granted.rbegin(); g != granted.rend(); ++g) {
        if (fresh(*g) && views[*g].cands[views[*g].held].config.type == type) {
          revoke(*g);
          ++revoked;
          break;
        }
      }
    }
    if (revoked == 0) break;
    unplaced += revoked;
    if (pass < 3) {  // then only take back, so that the loop ends
      serve(outside);
      serve(losers);
    }
    out = answer();
  }
  state.placement = std::move(placed);
  return out;
}

// The round's note and the state to carry to the next round.
Allocation ThemisPolicy::Round::finish(Allocation out) {
  char note[260];
  std::snprintf(note, sizeof note,
                "themis round %lld: %g GPUs offered, %d of %zu waiting jobs bid, %d won "
                "(%d solves, smallest c %.3g), %d leftover grants, %d unplaceable",
                round, offered, prob.apps, n, winners, auction.solves, min_c, leftover, unplaced);
  out.note = note;
  for (const std::string& w : auction.warnings) out.note += "; " + w;
  out.policy_state = p.last_text_ = state_to_text(state, cluster);
  return out;
}

Allocation ThemisPolicy::allocate(const GoodputMatrix& m,
                                  const std::optional<Allocation>& previous) {
  if (previous && previous->policy == "themis" && !previous->policy_state.empty() &&
      previous->policy_state != last_text_) {
    state_ = state_from_text(previous->policy_state, m.cluster);
  }
  Round r(*this, m);
  r.remember_jobs();
  r.build_views();
  r.renew_leases();
  r.form_apps();
  r.rank();
  r.collect_bids();
  AuctionOptions ao;
  ao.limits = solve_limits(o_);
  ao.use_glpk = o_.use_glpk;
  r.auction = run_auction(r.prob, ao);
  r.grant_winners();
  r.serve_leftovers();
  Allocation out = r.answer();
  if (!o_.quirks.themis_unchecked_grants) out = r.place_grants(std::move(out));
  return r.finish(std::move(out));
}

}  // namespace

std::unique_ptr<Policy> make_themis_policy(const PolicyOptions& options) {
  return std::make_unique<ThemisPolicy>(options);  // the knobs checked by make_policy
}

}  // namespace sia
