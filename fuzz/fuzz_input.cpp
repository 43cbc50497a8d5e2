#include "fuzz_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace sia::fuzz {

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    std::string templ = base + "/sia-fuzz-XXXXXX";
    if (!::mkdtemp(templ.data())) std::abort();
    dir = templ;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

const std::string& scratch_dir() {
  static Scratch s;
  return s.dir;
}

std::string scratch_path(const std::string& name) {
  return scratch_dir() + "/" + name;
}

void write_scratch(const std::string& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  ::fchmod(fd, 0600);
  for (std::size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

const Cluster& bundled_cluster() {
  static const Cluster c = read_cluster(SIA_FUZZ_DATA_DIR "/clusters/sia-hetero-64.toml");
  return c;
}

}  // namespace sia::fuzz
