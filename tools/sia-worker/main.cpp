// sia-worker: the reference training worker -- trains a small multi-layer perceptron on a
// seeded synthetic dataset with synchronous data-parallel SGD, following the worker contract
// of sia-worker(7) (environment in, JSON Lines reports out, checkpoint and exit 75 on SIGTERM).
#include <string>

#include "common/cli_app.hpp"
#include "worker/trainer.hpp"
#include "worker/worker_env.hpp"

int main(int argc, char** argv) {
  const char* program = "sia-worker";
  CLI::App app{
      "Train a small model with data-parallel SGD under the sia worker contract.\n"
      "Ranks, batch sizes, checkpoint directory and report sink come from the environment\n"
      "(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, SIA_*; see sia-worker(7)).\n\n"
      "Examples:\n"
      "  SIA_CKPT_DIR=/tmp/ck SIA_REPORT=/tmp/r.jsonl sia-worker --steps 500\n"
      "  SIA_PROFILE_STEPS=20 SIA_LOCAL_BSZ=64 sia-worker",
      program};
  sia::cli::CommonFlags common;
  sia::cli::add_common_flags(app, common, {"json"});
  sia::worker::TrainOptions opt;
  opt.device.clear();
  app.add_option("--steps", opt.max_steps, "Stop after this many optimizer steps (0: no limit)");
  app.add_option("--epochs", opt.max_epochs,
                 "Stop after this many passes over the data (default 10 without --steps)");
  app.add_option("--dataset-size", opt.data.size, "Samples in the synthetic dataset")
      ->check(CLI::Range(1, 1 << 26))
      ->capture_default_str();
  app.add_option("--features", opt.data.features, "Input features")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_option("--classes", opt.data.classes, "Classes")
      ->check(CLI::Range(2, 1 << 16))
      ->capture_default_str();
  app.add_option("--label-noise", opt.data.label_noise, "Fraction of random labels")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--hidden", opt.shape.hidden, "Width of the hidden layers")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_option("--layers", opt.shape.layers, "Hidden layers (0: logistic regression)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("--seed", opt.data.seed, "Seed of the data and the initial weights")
      ->capture_default_str();
  app.add_option("--lr", opt.lr, "Learning rate at the initial batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--momentum", opt.momentum, "SGD momentum")
      ->check(CLI::Range(0.0, 0.9999))
      ->capture_default_str();
  app.add_option("--init-batch-size", opt.init_batch_size,
                 "B0 of the gradient statistics (default $SIA_INIT_BATCH_SIZE, else the first "
                 "batch size; kept in the checkpoint)")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", opt.device, "auto, cpu or cuda (default $SIA_DEVICE, else auto)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--memory-limit", opt.memory_limit_mb,
                 "CPU backend memory budget in MiB (default $SIA_MEMORY_LIMIT_MB, else none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-steps", opt.checkpoint_steps,
                 "Also checkpoint every N optimizer steps (0: only on SIGTERM and at the end)");

  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  opt.shape.features = opt.data.features;
  opt.shape.classes = opt.data.classes;
  if (opt.max_steps == 0 && !app.count("--epochs")) opt.max_epochs = 10;
  int rank = 0;
  return sia::cli::run(program, [&] {
    try {
      sia::worker::WorkerEnv env = sia::worker::read_worker_env();
      rank = env.rank;
      if (opt.device.empty()) opt.device = env.device.empty() ? "auto" : env.device;
      const std::string who = "rank " + std::to_string(rank) + ": ";
      return sia::worker::train(env, opt,
                                [&](const std::string& m) { sia::cli::info(program, who + m); });
    } catch (const sia::Error& e) {
      throw sia::Error(e.status(), "rank " + std::to_string(rank) + ": " + e.what());
    }
  });
}
