#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/document.hpp"
#include "os/atomic_file.hpp"
#include "os/checkpoint_dir.hpp"
#include "test_util.hpp"
#include "worker/checkpoint.hpp"

using namespace sia;
using namespace sia::worker;
using namespace sia::os;
namespace fs = std::filesystem;

namespace {

TrainState sample_state(std::uint64_t step) {
  TrainState s;
  s.step = step;
  s.samples = step * 48;
  s.progress = step * 1.25;
  s.init_batch_size = 32;
  s.loss = 0.5;
  s.shape = MlpShape{4, 3, 1, 2};
  s.data.features = 4;
  s.data.classes = 2;
  s.data.seed = 7;
  s.gns.sqr_biased = 0.1;
  s.gns.sqr_unbias = 0.2;
  s.gns.var_biased = 0.3;
  s.gns.var_unbias = 0.4;
  s.gns.pair = true;
  s.model.params = init_params(s.shape, 7);
  s.model.momentum.assign(s.model.params.size(), 0.5f);
  return s;
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/sia-ckpt-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  return read_input(p.string());
}

}  // namespace

TEST_CASE("a checkpoint round-trips", "[worker][checkpoint]") {
  TrainState s = sample_state(12);
  TrainState t = decode_state(encode_state(s), "x");
  CHECK(t.step == 12);
  CHECK(t.samples == 12 * 48);
  CHECK(t.progress == 15);
  CHECK(t.init_batch_size == 32);
  CHECK(t.shape == s.shape);
  CHECK(t.data.seed == 7);
  CHECK(t.gns.var_unbias == 0.4);
  CHECK(t.gns.pair);
  CHECK(t.model.params == s.model.params);
  CHECK(t.model.momentum == s.model.momentum);
}

TEST_CASE("a damaged checkpoint is refused with status 65", "[worker][checkpoint]") {
  const std::string bytes = encode_state(sample_state(3));
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x01;
  auto e = test::error_of([&] { decode_state(flipped, "f.bin"); });
  CHECK(e.first == 65);
  CHECK(e.second == "f.bin: corrupt checkpoint: checksum mismatch");
  e = test::error_of([&] { decode_state(bytes.substr(0, bytes.size() - 10), "t.bin"); });
  CHECK(e.first == 65);
  CHECK(e.second.find("t.bin: corrupt checkpoint: truncated") == 0);
  e = test::error_of([&] { decode_state(bytes.substr(0, 10), "s.bin"); });
  CHECK(e.first == 65);
  e = test::error_of([&] { decode_state("this is not a checkpoint at all, is it?", "n.bin"); });
  CHECK(e.second == "n.bin: corrupt checkpoint: not a sia-worker checkpoint");
}

TEST_CASE("latest names the newest complete checkpoint", "[worker][checkpoint]") {
  TempDir d;
  CHECK_FALSE(load_checkpoint(d.path.string()));
  for (std::uint64_t step : {10, 20, 30}) save_checkpoint(d.path.string(), sample_state(step));
  CHECK(slurp(d.path / "latest") == checkpoint_name(30) + "\n");
  // Only the new one and the one `latest` named before are kept.
  CHECK_FALSE(fs::exists(d.path / checkpoint_name(10)));
  CHECK(fs::exists(d.path / checkpoint_name(20)));
  auto s = load_checkpoint(d.path.string());
  REQUIRE(s);
  CHECK(s->step == 30);
}

TEST_CASE("a half-written checkpoint is never used", "[worker][checkpoint]") {
  TempDir d;
  save_checkpoint(d.path.string(), sample_state(5));
  const std::string full = encode_state(sample_state(6));
  // A writer died mid-way: its temporary file and even a newer-looking ckpt file that
  // `latest` does not name are ignored.
  std::ofstream(d.path / ".ckpt-000000000006.bin.tmp.999999") << full.substr(0, full.size() / 2);
  std::ofstream(d.path / checkpoint_name(6)) << full.substr(0, full.size() / 2);
  auto s = load_checkpoint(d.path.string());
  REQUIRE(s);
  CHECK(s->step == 5);
  // The next save clears them away but keeps the previous complete checkpoint.
  save_checkpoint(d.path.string(), sample_state(7));
  CHECK(fs::exists(d.path / checkpoint_name(5)));
  CHECK_FALSE(fs::exists(d.path / checkpoint_name(6)));
  CHECK_FALSE(fs::exists(d.path / ".ckpt-000000000006.bin.tmp.999999"));
  os::write_file_atomic((d.path / "latest").string(), checkpoint_name(5) + "\n");
  // The file `latest` names, truncated: the newest intact one instead, said aloud.
  fs::resize_file(d.path / checkpoint_name(5), 100);
  std::string note;
  s = load_checkpoint(d.path.string(), &note);
  REQUIRE(s);
  CHECK(s->step == 7);
  CHECK(note.find("corrupt checkpoint: truncated") != std::string::npos);
  CHECK(note.find("restoring the newest intact checkpoint, " + checkpoint_name(7)) !=
        std::string::npos);
  // None intact: the error, never a silent fresh start.
  fs::resize_file(d.path / checkpoint_name(7), 100);
  auto e = test::error_of([&] { load_checkpoint(d.path.string()); });
  CHECK(e.first == 65);
  CHECK(e.second.find("corrupt checkpoint: truncated") != std::string::npos);
}

TEST_CASE("a missing checkpoint falls back to the newest intact one", "[worker][checkpoint]") {
  TempDir d;
  save_checkpoint(d.path.string(), sample_state(3));
  save_checkpoint(d.path.string(), sample_state(4));
  fs::remove(d.path / checkpoint_name(4));
  std::string note;
  auto s = load_checkpoint(d.path.string(), &note);
  REQUIRE(s);
  CHECK(s->step == 3);
  CHECK(note.find(checkpoint_name(3)) != std::string::npos);
}

TEST_CASE("a stale generation cannot move latest", "[worker][checkpoint]") {
  TempDir d;
  const std::string dir = d.path.string();
  save_checkpoint(dir, sample_state(10), 4);
  raise_checkpoint_generation(dir, 5);  // sia-run starts generation 5
  raise_checkpoint_generation(dir, 3);  // never lowered
  CHECK(checkpoint_generation(dir) == 5);
  // Generation 4, still running somewhere, checkpoints later: refused, nothing written.
  auto e = test::error_of([&] { save_checkpoint(dir, sample_state(12), 4); });
  CHECK(e.first == 75);
  CHECK(e.second.find("generation 5 of this job has started") != std::string::npos);
  CHECK(slurp(d.path / "latest") == checkpoint_name(10) + "\n");
  CHECK_FALSE(fs::exists(d.path / checkpoint_name(12)));
  // The current generation (and one sia-run did not start) write as before.
  save_checkpoint(dir, sample_state(11), 5);
  CHECK(slurp(d.path / "latest") == checkpoint_name(11) + "\n");
  save_checkpoint(dir, sample_state(13));
  CHECK(slurp(d.path / "latest") == checkpoint_name(13) + "\n");
  // A finished job says which generation finished.
  CHECK_FALSE(checkpoint_finished(dir));
  mark_checkpoint_finished(dir, 5);
  CHECK(checkpoint_finished(dir) == 5L);
}

TEST_CASE("latest must name a checkpoint file", "[worker][checkpoint]") {
  TempDir d;
  os::write_file_atomic((d.path / "latest").string(), "../../etc/passwd\n");
  auto e = test::error_of([&] { load_checkpoint(d.path.string()); });
  CHECK(e.first == 65);
  os::write_file_atomic((d.path / "latest").string(), checkpoint_name(4) + "\n");
  CHECK(test::error_of([&] { load_checkpoint(d.path.string()); }).first == 66);
}
