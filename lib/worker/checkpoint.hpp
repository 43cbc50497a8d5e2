// Checkpoints of the reference worker: the data-parallel training state, which does not
// depend on the world size or the batch size -- model and momentum, optimizer steps taken,
// the data position (samples of the training stream consumed; the stream's order is a
// function of the seed), statistical progress, B0 and the gradient statistics' averages --
// plus what it was trained with (model shape, data), checked when restoring.
//
// On disk, in SIA_CKPT_DIR: ckpt-<step>.bin files ("SIACKPT" header, version, payload
// length, payload, CRC-32 of all before it; host byte order) and `latest`, one line naming
// the current file. save_checkpoint writes the file atomically (temporary file, fsync,
// rename, fsync of the directory), only then replaces `latest` the same way, and keeps just
// that file and the one `latest` named before (other ckpt files and the temporary files of
// dead writers are removed) -- all of it holding the directory's lock, and only while no
// newer generation has started (os/checkpoint_dir.hpp; status 75 otherwise, nothing
// written). load_checkpoint reads what `latest` names, so a half-written file is never
// used; when that file is missing, truncated or fails its checksum it restores the newest
// intact other checkpoint and says so in `note`; with none, the first error (66 or 65),
// never a silent fresh start.
// Thread-safety: functions on distinct directories may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "worker/backend.hpp"
#include "worker/dataset.hpp"
#include "worker/grad_stats.hpp"
#include "worker/mlp.hpp"

namespace sia::worker {

struct TrainState {
  std::uint64_t step = 0;
  std::uint64_t samples = 0;
  double progress = 0;
  double init_batch_size = 0;
  double loss = 0;  // the last reported training loss (informational)
  MlpShape shape;
  DatasetConfig data;
  GradientNoiseScale::State gns;
  ModelState model;
};

std::string encode_state(const TrainState& state);
// `name` is used in error messages (status 65).
TrainState decode_state(std::string_view bytes, const std::string& name);

// Writes the state as ckpt-<step>.bin and points `latest` at it; returns the file's path.
// `generation` is the writer's SIA_ROUND (0: not started by sia-run, never fenced).
std::string save_checkpoint(const std::string& dir, const TrainState& state, long generation = 0);
// The state `latest` names (or the newest intact one, `note` saying why), or nullopt when
// the directory has no `latest`.
std::optional<TrainState> load_checkpoint(const std::string& dir, std::string* note = nullptr);
// "ckpt-00000000000000000042.bin"
std::string checkpoint_name(std::uint64_t step);

}  // namespace sia::worker
