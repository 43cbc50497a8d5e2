#include "worker/checkpoint.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/crc32.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "os/atomic_file.hpp"
#include "os/checkpoint_dir.hpp"

namespace sia::worker {

namespace {

namespace fs = std::filesystem;

// A checkpoint is the worker's own file, as large as its model: not held to the 64 MiB an
// input document may have (read_input's default), only to a bound no model reaches.
constexpr std::size_t kMaxCheckpointBytes = std::size_t{1} << 40;

constexpr char kMagic[8] = {'S', 'I', 'A', 'C', 'K', 'P', 'T', '\0'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeader = 8 + 4 + 4 + 8;  // magic, version, reserved, payload length

class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void floats(const std::vector<float>& v) {
    put<std::uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view in, const std::string& name) : in_(in), name_(name) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::vector<float> floats() {
    auto n = get<std::uint64_t>();
    if (n > (1ULL << 34)) fail("implausible vector length");
    need(n * sizeof(float));
    std::vector<float> v(n);
    std::memcpy(v.data(), in_.data() + pos_, n * sizeof(float));
    pos_ += n * sizeof(float);
    return v;
  }
  bool done() const { return pos_ == in_.size(); }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ExitStatus::data, name_ + ": corrupt checkpoint: " + what);
  }

 private:
  void need(std::size_t n) const {
    if (in_.size() - pos_ < n) fail("payload ends early");
  }
  std::string_view in_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

bool valid_name(const std::string& s) {
  if (s.size() < 10 || s.rfind("ckpt-", 0) != 0 || s.substr(s.size() - 4) != ".bin") {
    return false;
  }
  for (std::size_t i = 5; i + 4 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// The checkpoint file `latest` names in dir ("" if none or unreadable).
std::string latest_name(const std::string& dir) {
  std::error_code ec;
  const fs::path latest = fs::path(dir) / "latest";
  if (!fs::exists(latest, ec)) return "";
  std::string name;
  try {
    name = read_input(latest.string());
  } catch (const Error&) {
    return "";
  }
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r' || name.back() == ' ')) {
    name.pop_back();
  }
  return name;
}

// Keeps `current` and `previous` (the checkpoint `latest` named before); removes every
// other ckpt file (older ones, and leftovers of writers that died) and the temporary files
// of writers that are gone.
void prune(const std::string& dir, const std::string& current, const std::string& previous) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (valid_name(n)) {
      if (n != current && n != previous) fs::remove(e.path(), ec);
    } else if (n.rfind(".ckpt-", 0) == 0 || n.rfind(".latest.tmp.", 0) == 0) {
      auto dot = n.rfind('.');
      long pid = std::strtol(n.c_str() + dot + 1, nullptr, 10);
      if (pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
          errno == ESRCH) {
        fs::remove(e.path(), ec);
      }
    }
  }
}

}  // namespace

std::string checkpoint_name(std::uint64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "ckpt-%012llu.bin", static_cast<unsigned long long>(step));
  return buf;
}

std::string encode_state(const TrainState& s) {
  Writer p;
  p.put(s.step);
  p.put(s.samples);
  p.put(s.progress);
  p.put(s.init_batch_size);
  p.put(s.loss);
  p.put<std::int32_t>(s.shape.features);
  p.put<std::int32_t>(s.shape.hidden);
  p.put<std::int32_t>(s.shape.layers);
  p.put<std::int32_t>(s.shape.classes);
  p.put(s.data.seed);
  p.put<std::int32_t>(s.data.size);
  p.put<std::int32_t>(s.data.features);
  p.put<std::int32_t>(s.data.classes);
  p.put(s.data.label_noise);
  p.put(s.gns.sqr_biased);
  p.put(s.gns.sqr_unbias);
  p.put(s.gns.var_biased);
  p.put(s.gns.var_unbias);
  p.put<std::uint8_t>(s.gns.pair ? 1 : 0);
  p.floats(s.model.params);
  p.floats(s.model.momentum);
  Writer out;
  out.str().append(kMagic, sizeof kMagic);
  out.put(kVersion);
  out.put<std::uint32_t>(0);
  out.put<std::uint64_t>(p.str().size());
  out.str() += p.str();
  out.put(crc32(out.str()));
  return std::move(out.str());
}

TrainState decode_state(std::string_view bytes, const std::string& name) {
  Reader head(bytes, name);
  if (bytes.size() < kHeader + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    head.fail(bytes.size() < kHeader + 4 ? "truncated (" + std::to_string(bytes.size()) + " bytes)"
                                         : "not a sia-worker checkpoint");
  }
  std::uint32_t version;
  std::uint64_t length;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&length, bytes.data() + 16, 8);
  if (version != kVersion) head.fail("version " + std::to_string(version) + " is not 1");
  if (length != bytes.size() - kHeader - 4) {
    head.fail("truncated or padded: " + std::to_string(bytes.size()) + " bytes, expected " +
              std::to_string(kHeader + length + 4));
  }
  std::uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  if (crc32(bytes.substr(0, bytes.size() - 4)) != stored) head.fail("checksum mismatch");
  Reader r(bytes.substr(kHeader, length), name);
  TrainState s;
  s.step = r.get<std::uint64_t>();
  s.samples = r.get<std::uint64_t>();
  s.progress = r.get<double>();
  s.init_batch_size = r.get<double>();
  s.loss = r.get<double>();
  s.shape.features = r.get<std::int32_t>();
  s.shape.hidden = r.get<std::int32_t>();
  s.shape.layers = r.get<std::int32_t>();
  s.shape.classes = r.get<std::int32_t>();
  s.data.seed = r.get<std::uint64_t>();
  s.data.size = r.get<std::int32_t>();
  s.data.features = r.get<std::int32_t>();
  s.data.classes = r.get<std::int32_t>();
  s.data.label_noise = r.get<double>();
  s.gns.sqr_biased = r.get<double>();
  s.gns.sqr_unbias = r.get<double>();
  s.gns.var_biased = r.get<double>();
  s.gns.var_unbias = r.get<double>();
  s.gns.pair = r.get<std::uint8_t>() != 0;
  s.model.params = r.floats();
  s.model.momentum = r.floats();
  if (!r.done()) r.fail("trailing bytes in the payload");
  if (s.shape.features < 1 || s.shape.hidden < 1 || s.shape.layers < 0 || s.shape.classes < 2 ||
      s.shape.layers > 1024 || s.model.params.size() != s.shape.param_count() ||
      s.model.momentum.size() != s.model.params.size()) {
    r.fail("model shape and parameter count disagree");
  }
  return s;
}

std::string save_checkpoint(const std::string& dir, const TrainState& s, long generation) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ExitStatus::cant_create, dir + ": " + ec.message());
  const std::string name = checkpoint_name(s.step);
  const std::string path = (fs::path(dir) / name).string();
  const std::string bytes = encode_state(s);
  // Checked, written and made current as one step: a stale generation's writer neither
  // replaces a file of the newer one nor moves `latest` nor prunes.
  os::CheckpointDirLock lock(dir);
  os::check_checkpoint_generation(dir, generation);
  const std::string previous = latest_name(dir);
  os::write_file_atomic(path, bytes);
  os::write_file_atomic((fs::path(dir) / "latest").string(), name + "\n");
  prune(dir, name, valid_name(previous) ? previous : "");
  return path;
}

std::optional<TrainState> load_checkpoint(const std::string& dir, std::string* note) {
  const std::string latest = (fs::path(dir) / "latest").string();
  std::error_code ec;
  if (!fs::exists(latest, ec)) return std::nullopt;
  read_input(latest);  // unreadable: status 66
  const std::string name = latest_name(dir);
  if (!valid_name(name)) {
    throw Error(ExitStatus::data, latest + ": expected the name of a ckpt-<step>.bin file");
  }
  const std::string path = (fs::path(dir) / name).string();
  try {
    return decode_state(read_input(path, kMaxCheckpointBytes), path);
  } catch (const Error& damaged) {
    // The newest other checkpoint that is intact, said aloud; none: the first error.
    std::vector<std::string> others;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string n = e.path().filename().string();
      if (valid_name(n) && n != name) others.push_back(n);
    }
    std::sort(others.rbegin(), others.rend());  // zero-padded steps: newest first
    for (const auto& n : others) {
      const std::string other = (fs::path(dir) / n).string();
      try {
        TrainState st = decode_state(read_input(other, kMaxCheckpointBytes), other);
        if (note) {
          *note = std::string(damaged.what()) + "; restoring the newest intact checkpoint, " + n +
                  " (step " + std::to_string(st.step) + "), instead";
        }
        return st;
      } catch (const Error&) {
      }
    }
    throw;
  }
}

}  // namespace sia::worker
