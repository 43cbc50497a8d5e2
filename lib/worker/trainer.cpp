#include "worker/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "os/clock.hpp"
#include "worker/batch_plan.hpp"
#include "worker/checkpoint.hpp"
#include "worker/cpu_backend.hpp"
#include "worker/cuda_plugin.hpp"
#include "worker/exit_codes.hpp"
#include "worker/grad_stats.hpp"
#include "worker/report_sink.hpp"
#include "worker/stop_signal.hpp"
#include "worker/tcp_comm.hpp"

namespace sia::worker {

namespace {

using nlohmann::json;

// "cpu" or "cuda" for this rank; Error(69) when cuda is asked for and unavailable.
std::string choose_device(const TrainOptions& opt) {
  std::string device = opt.device.empty() ? "auto" : opt.device;
  std::string why;
  if (device == "auto") {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    // CUDA_VISIBLE_DEVICES="" means: no GPU; do not even load the plugin.
    const bool maybe = !(visible && *visible == '\0');
    return maybe && cuda_device_count(&why) > 0 ? "cuda" : "cpu";
  }
  if (device == "cuda" && cuda_device_count(&why) <= 0) {
    throw Error(ExitStatus::unavailable, why);
  }
  return device;
}

// All ranks learn every rank's status (0: fine); a rank that is fine throws the first
// failure it hears of, so that no rank waits for one that has given up.
void vote(Communicator& comm, const std::optional<Error>& mine, const std::string& what) {
  std::vector<double> status(static_cast<std::size_t>(comm.size()), 0.0);
  status[static_cast<std::size_t>(comm.rank())] = mine ? to_int(mine->status()) : 0;
  comm.allreduce_sum(status.data(), status.size());
  if (mine) throw *mine;
  for (std::size_t r = 0; r < status.size(); ++r) {
    if (status[r] != 0) {
      const int st = static_cast<int>(status[r]);
      throw Error(static_cast<ExitStatus>(st), "rank " + std::to_string(r) + " could not " + what +
                                                   " (status " + std::to_string(st) +
                                                   "; see its log)");
    }
  }
}

// Builds the backend on every rank: the same kind everywhere, and when one rank fails (a
// micro-batch that does not fit, no device) every rank fails with its status.
std::unique_ptr<Backend> make_backend(const WorkerEnv& env, const TrainOptions& opt,
                                      Communicator& comm) {
  std::optional<Error> error;
  std::string device;
  try {
    device = choose_device(opt);
  } catch (const Error& e) {
    error = e;
  }
  vote(comm, error, "find its device");
  double cuda = device == "cuda" ? 1 : 0;
  comm.allreduce_sum(&cuda, 1);
  if (cuda != 0 && cuda != comm.size()) {
    throw Error(ExitStatus::config, "the ranks disagree on the device (" +
                                        std::to_string(static_cast<int>(cuda)) + " of " +
                                        std::to_string(comm.size()) +
                                        " found a GPU); set SIA_DEVICE or --device");
  }
  if (device == "cuda") {  // the plugin lets the ranks agree before NCCL starts
    CudaBackendConfig c{opt.shape, env.batch.local, env.local_rank, env.local_world_size};
    return make_cuda_backend(c, comm);
  }
  std::unique_ptr<Backend> backend;
  const double limit = opt.memory_limit_mb > 0 ? opt.memory_limit_mb : env.memory_limit_mb;
  try {
    backend = std::make_unique<CpuBackend>(opt.shape, comm, env.batch.local, limit * 1048576.0);
  } catch (const Error& e) {
    error = e;
  }
  vote(comm, error, "start its backend");
  return backend;
}

// Rank 0's verdict travels to every rank: "S" + payload, or "E<status>:<message>".
std::string verdict_error(const Error& e) {
  return "E" + std::to_string(to_int(e.status())) + ":" + e.what();
}

std::string take_verdict(const std::string& v) {
  if (!v.empty() && v[0] == 'S') return v.substr(1);
  auto colon = v.find(':');
  if (v.empty() || v[0] != 'E' || colon == std::string::npos) {
    throw Error(ExitStatus::software, "rank 0 sent a malformed message");
  }
  int status = std::atoi(v.substr(1, colon - 1).c_str());
  throw Error(static_cast<ExitStatus>(status), "rank 0: " + v.substr(colon + 1));
}

TrainState fresh_state(const WorkerEnv& env, const TrainOptions& opt) {
  TrainState s;
  s.shape = opt.shape;
  s.data = opt.data;
  s.init_batch_size = opt.init_batch_size > 0   ? opt.init_batch_size
                      : env.init_batch_size > 0 ? env.init_batch_size
                                                : static_cast<double>(env.batch.global);
  s.model.params = init_params(opt.shape, opt.data.seed);
  s.model.momentum.assign(s.model.params.size(), 0.0f);
  return s;
}

// Rank 0 restores (or starts) and sends the state to every rank.
TrainState initial_state(const WorkerEnv& env, const TrainOptions& opt, Communicator& comm,
                         const Log& log) {
  std::string msg;
  if (comm.rank() == 0) {
    try {
      std::optional<TrainState> s;
      if (env.restore) {
        std::string note;
        s = load_checkpoint(env.ckpt_dir, &note);
        if (!note.empty()) log("warning: " + note);
        if (!s) {
          log("warning: SIA_RESTORE=1 but " + env.ckpt_dir +
              " has no checkpoint (no 'latest'): starting from step 0");
        }
      }
      if (s) {
        if (!(s->shape == opt.shape) || s->data.seed != opt.data.seed ||
            s->data.size != opt.data.size || s->data.features != opt.data.features ||
            s->data.classes != opt.data.classes || s->data.label_noise != opt.data.label_noise) {
          throw Error(ExitStatus::data, env.ckpt_dir +
                                            ": the checkpoint was written for another model or "
                                            "dataset (check --hidden, --layers, --seed, ...)");
        }
        double b0 = opt.init_batch_size > 0 ? opt.init_batch_size : env.init_batch_size;
        if (b0 > 0 && b0 != s->init_batch_size) {
          log("warning: keeping the checkpoint's initial batch size " +
              std::to_string(s->init_batch_size));
        }
        log("restored step " + std::to_string(s->step) + " (" + std::to_string(s->samples) +
            " samples) from " + env.ckpt_dir);
      } else {
        s = fresh_state(env, opt);
      }
      msg = "S" + encode_state(*s);
    } catch (const Error& e) {
      msg = verdict_error(e);
      comm.broadcast(msg);
      throw;
    }
  }
  comm.broadcast(msg);
  return decode_state(take_verdict(msg), "the state from rank 0");
}

struct Interval {
  int steps = 0;
  double loss = 0;
  int timed = 0;
  double step_time = 0;
  double sync_time = 0;
};

TcpCommConfig comm_config(const WorkerEnv& env) {
  TcpCommConfig cc;
  cc.rank = env.rank;
  cc.world_size = env.world_size;
  cc.master_addr = env.master_addr;
  cc.master_port = env.master_port;
  cc.job = env.job;
  cc.round = env.round;
  cc.rendezvous_timeout = env.rendezvous_timeout;
  cc.peer_timeout = env.peer_timeout;
  cc.stop = stop_requested;
  return cc;
}

// One train() call: what its steps share, and the steps. train() sets it up in order
// (report sink, rendezvous, state, backend) and runs the loop.
struct Run {
  Run(const WorkerEnv& e, const TrainOptions& o, const Log& l)
      : env(e), opt(o), log(l), root(e.rank == 0), profiling(e.profile_steps > 0) {}

  // The figures of the batch settings in force (cur_env).
  void set_batch_figures() {
    b = cur_env.batch.local;
    micro = cur_env.micro_steps();
    count = world * micro;
    batch = static_cast<double>(cur_env.batch.global);
    lr = opt.lr * std::sqrt(batch / b0);
  }
  void switch_batch(const BatchPlan& plan);
  bool done() const {
    return (opt.max_steps > 0 && st.step >= opt.max_steps) ||
           (opt.max_epochs > 0 &&
            static_cast<double>(st.samples) >= opt.max_epochs * static_cast<double>(n));
  }
  // Of the training the limits ask for (whichever comes first): what an app scheduler
  // measures a trial's rung by.
  double fraction() const {
    double f = 0;
    if (opt.max_steps > 0) f = static_cast<double>(st.step) / static_cast<double>(opt.max_steps);
    if (opt.max_epochs > 0) {
      f = std::max(f, static_cast<double>(st.samples) / (opt.max_epochs * static_cast<double>(n)));
    }
    return std::min(1.0, f);
  }
  // A trial at its app's rung stops as if preempted: its controller restarts it if it goes on.
  bool at_rung() const { return env.stop_fraction > 0 && fraction() >= env.stop_fraction; }
  void report(const char* reason);
  void step(SyntheticDataset& data, BatchPlanWatcher& plans, double (&scalars)[7], bool timed);
  int finish();

  const WorkerEnv& env;
  const TrainOptions& opt;
  const Log& log;
  const bool root;
  const bool profiling;
  std::unique_ptr<ReportSink> sink;
  std::unique_ptr<TcpComm> comm;
  TrainState st;
  WorkerEnv cur_env;  // the batch settings in force; a batch plan changes them
  std::unique_ptr<Backend> backend;
  GradientNoiseScale gns;
  int world = 1, b = 1, micro = 1, count = 1;
  double batch = 1, b0 = 1, lr = 0;
  std::uint64_t n = 0;  // samples in an epoch
  int in_force = 0;     // the batch plan the workers train with (0: the start's batch)
  Interval cur, last;
  double last_report = 0;
  std::vector<float> x;
  std::vector<std::int32_t> y;
};

// Every rank switches to batch plan `plan` after the same step: the model moves to a
// backend sized for the new micro-batch; one that does not fit keeps the old batch.
void Run::switch_batch(const BatchPlan& plan) {
  WorkerEnv next = cur_env;
  next.batch = plan.batch;
  ModelState model = backend->state();
  backend.reset();
  std::optional<Error> failed;  // make_backend fails on every rank or on none
  try {
    backend = make_backend(next, opt, *comm);
  } catch (const Error& e) {
    failed = e;
  }
  // Only when every rank ran out of memory do they all keep the old batch; any other
  // failure ends every rank (none waits in a collective for one that has gone).
  double verdict[2] = {failed && failed->status() == kOutOfMemory ? 1.0 : 0.0,
                       failed && failed->status() != kOutOfMemory ? 1.0 : 0.0};
  comm->allreduce_sum(verdict, 2);
  if (verdict[1] > 0) {
    if (failed) throw *failed;
    throw Error(ExitStatus::unavailable, "another rank could not take batch plan " +
                                             std::to_string(plan.plan) + " (see its log)");
  }
  if (verdict[0] > 0) {
    if (root) {
      log("warning: batch plan " + std::to_string(plan.plan) + ": " +
          (failed ? std::string(failed->what()) : "out of memory on another rank") +
          "; keeping local batch " + std::to_string(cur_env.batch.local));
    }
    backend = make_backend(cur_env, opt, *comm);
  } else {
    cur_env = next;
    in_force = plan.plan;
  }
  backend->set_state(model);
  set_batch_figures();
  if (root) {
    log("batch plan " + std::to_string(plan.plan) + " at step " + std::to_string(st.step) +
        ": local batch " + std::to_string(b) + " x " + std::to_string(micro) +
        " micro-step(s), batch " + std::to_string(cur_env.batch.global) + ", lr " +
        std::to_string(lr));
  }
}

// Rank 0 sends a report of the interval so far (the last one's figures when this one has
// none yet) and starts a new interval.
void Run::report(const char* reason) {
  if (!root) return;
  const Interval& use = cur.steps > 0 ? cur : last;
  json r = {
      {"type", "report"},        {"job", env.job},          {"round", env.round},
      {"step", st.step},         {"epoch", st.samples / n}, {"samples", st.samples},
      {"progress", st.progress}, {"local_bsz", b},          {"accum_steps", micro - 1},
      {"world_size", world},     {"nodes", env.nodes()},    {"batch_size", cur_env.batch.global},
      {"plan", in_force},        {"reason", reason}};
  if (!env.gpu_type.empty()) r["gpu_type"] = env.gpu_type;
  if (use.steps > 0) r["loss"] = use.loss / use.steps;
  r["fraction"] = fraction();
  if (use.timed > 0) {
    r["step_time"] = use.step_time / use.timed;
    r["sync_time"] = use.sync_time / use.timed;
  }
  if (auto g = gns.estimate()) {
    r["grad_sqr"] = g->sqr;
    r["grad_var"] = g->var;
  }
  sink->send(r);
  if (cur.steps > 0) last = cur;
  cur = Interval{};
  last_report = os::now_seconds();
}

// One optimizer step: the micro-steps, the sync of the scalars (loss sum, sum of |g_i|^2,
// stop votes; then rank 0's batch plan: plan, batch, local batch, accumulation; zeros:
// none, so that every rank learns it at this step), the update, the progress and the
// interval's figures (its time when `timed`).
void Run::step(SyntheticDataset& data, BatchPlanWatcher& plans, double (&scalars)[7], bool timed) {
  x.resize(static_cast<std::size_t>(b) * opt.data.features);
  y.resize(static_cast<std::size_t>(b));
  const double t0 = os::now_seconds();
  double micro_time = 0;
  for (int a = 0; a < micro; ++a) {
    const double tm = os::now_seconds();
    data.gather(micro_batch_start(st.samples, env.rank, world, b, a), b, x.data(), y.data());
    MicroResult r = backend->micro_step(x.data(), y.data(), b);
    micro_time += os::now_seconds() - tm;
    scalars[0] += r.loss;
    scalars[1] += r.grad_sqr;
  }
  scalars[2] = stop_requested() ? 1 : 0;
  if (auto plan = plans.poll()) {
    scalars[3] = plan->plan;
    scalars[4] = static_cast<double>(plan->batch.global);
    scalars[5] = plan->batch.local;
    scalars[6] = plan->batch.accum_steps;
  }
  const double ts = os::now_seconds();
  backend->sync(scalars, 7);
  const double sync = os::now_seconds() - ts;
  UpdateResult up = backend->update(count, lr, opt.momentum, count == 1);
  if (count > 1) {
    gns.update(scalars[1] / count, up.total_sqr, count, count * b / b0);
  } else if (up.paired) {
    gns.update_pair(up.prev_sqr, up.total_sqr, up.pair_sqr, b / b0);
  } else {
    gns.note_unpaired();
  }
  st.progress += gns.gain(batch, b0);
  ++st.step;
  st.samples += static_cast<std::uint64_t>(cur_env.batch.global);
  const double loss = scalars[0] / count;
  if (!std::isfinite(loss)) {
    throw Error(ExitStatus::data, "training diverged at step " + std::to_string(st.step) +
                                      ": the loss is not finite (lower --lr)");
  }
  st.loss = loss;
  // One optimizer step without accumulation: the step less its extra micro-steps.
  const double step_time = (os::now_seconds() - t0) - (micro - 1) * (micro_time / micro);
  ++cur.steps;
  cur.loss += loss;
  if (timed) {
    ++cur.timed;
    cur.step_time += step_time;
    cur.sync_time += std::min(sync, step_time);
  }
}

// The end of a run stopped or done: rank 0 checkpoints and reports, and every rank learns
// whether that worked.
int Run::finish() {
  const bool finished = done();
  std::string verdict = "S";
  if (root) {
    st.model = backend->state();
    st.gns = gns.state();
    try {
      std::string path = save_checkpoint(env.ckpt_dir, st, env.round);
      log(std::string(finished ? "done" : "preempted") + " at step " + std::to_string(st.step) +
          ": checkpoint " + path);
    } catch (const Error& e) {
      verdict = verdict_error(e);
    }
    report(finished ? "done" : at_rung() ? "rung" : "preempted");
  }
  comm->broadcast(verdict);
  take_verdict(verdict);
  return finished ? 0 : to_int(kPreempted);
}

}  // namespace

int train(const WorkerEnv& env, const TrainOptions& opt, const Log& log) {
  install_stop_handlers();
  Run r(env, opt, log);
  for (const auto& w : env.warnings) {
    if (r.root) log("warning: " + w);
  }
  if (opt.max_steps == 0 && opt.max_epochs <= 0 && !r.profiling) {
    throw Error(ExitStatus::usage, "no end of training: give a number of steps or epochs");
  }
  // Reports go out before the (possibly slow) rendezvous fails, so open the sink first.
  if (r.root) r.sink = std::make_unique<ReportSink>(env.report, log);
  r.comm = TcpComm::connect(comm_config(env));

  r.st = initial_state(env, opt, *r.comm, log);
  SyntheticDataset data(opt.data);
  r.cur_env = env;
  r.backend = make_backend(r.cur_env, opt, *r.comm);
  r.backend->set_state(r.st.model);
  r.gns.set_state(r.st.gns);

  r.world = env.world_size;
  r.b0 = r.st.init_batch_size;
  r.set_batch_figures();
  r.n = static_cast<std::uint64_t>(opt.data.size);
  BatchPlanWatcher plans(r.root && !r.profiling ? env.batch_plan : "", env.round, r.world,
                         [&](const std::string& w) { log("warning: " + w); });
  if (r.root) {
    log("job " + env.job + " round " + std::to_string(env.round) + ": " + std::to_string(r.world) +
        " rank(s) on " + r.backend->describe() + ", local batch " + std::to_string(r.b) + " x " +
        std::to_string(r.micro) + " micro-step(s), batch " + std::to_string(env.batch.global) +
        ", lr " + std::to_string(r.lr) + ", from step " + std::to_string(r.st.step));
  }
  r.last_report = os::now_seconds();

  const int warmup = r.profiling ? opt.profile_warmup : 1;
  std::uint64_t timed_after = static_cast<std::uint64_t>(warmup);  // steps not timed
  for (std::uint64_t steps_run = 0; r.profiling || !(r.done() || r.at_rung());) {
    double scalars[7] = {0, 0, 0, 0, 0, 0, 0};
    ++steps_run;
    r.step(data, plans, scalars, steps_run > timed_after);
    if (r.profiling && steps_run >= static_cast<std::uint64_t>(warmup + env.profile_steps)) {
      r.report("profile");
      return 0;
    }
    if (scalars[2] > 0) break;  // a stop vote
    if (scalars[3] > 0 && !r.done()) {
      const BatchPlan plan{static_cast<int>(scalars[3]),
                           {static_cast<std::int64_t>(scalars[4]), static_cast<int>(scalars[5]),
                            static_cast<int>(scalars[6])}};
      r.report("interval");  // the old batch's figures; the new batch's have none yet
      r.last = Interval{};
      plans.set_applied(plan.plan);  // taken or refused, it is not read again
      r.switch_batch(plan);
      r.report("batch");
      timed_after = steps_run + 1;  // its first step warms the new backend up
    } else if (os::now_seconds() - r.last_report >= env.report_interval) {
      r.report("interval");
    }
    if (r.root && opt.checkpoint_steps > 0 && r.st.step % opt.checkpoint_steps == 0) {
      r.st.model = r.backend->state();
      r.st.gns = r.gns.state();
      save_checkpoint(env.ckpt_dir, r.st, env.round);
    }
  }
  if (r.profiling) return to_int(kPreempted);  // stopped before the measurement ended
  return r.finish();
}

}  // namespace sia::worker
