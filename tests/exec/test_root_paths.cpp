// Root only: the privilege-escalation suite of sia-run(1), SECURITY. A job runs as nobody;
// its user owns its logs/ and ckpt/ directories and plants, in them, symbolic links, hard
// links and FIFOs (or swaps a name while it runs) where root -- the agent, a supervisor, a
// log fetch for `sia-ctl logs` -- opens, creates, reads, appends to or hands over a file.
// Each case asserts that the root-owned target is unchanged, unread and still root's.
// Links nobody could not make itself (a hard link to a root file needs
// fs.protected_hardlinks = 0) are planted by the test, as on a machine without that
// protection. Exits 77 (ctest skips it) when not run as root.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "core/error.hpp"
#include "exec/local_launcher.hpp"
#include "exec/rank_log.hpp"
#include "exec/run_as.hpp"
#include "exec/state_dir.hpp"
#include "next_exit.hpp"
#include "os/atomic_file.hpp"
#include "os/checkpoint_dir.hpp"
#include "os/make_dirs.hpp"
#include "os/spawn.hpp"
#include "root_only.hpp"
#include "temp_dir.hpp"

using namespace sia::exec;
using sia::exec::test::next_exit;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

namespace {

constexpr const char* kSecret = "root's secret\n";

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sia::Error& e) {
    CHECK(std::string(e.what()).find("secret") == std::string::npos);
    return sia::to_int(e.status());
  }
  return 0;
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st;
}

// One job of nobody's in a state directory of root's, as apply leaves it before the
// supervisor starts, and a root-only file beside it.
struct Job {
  TempDir tmp;
  StateDir state{tmp / "s"};
  JobLaunch launch;
  sia::os::Account nobody;
  std::string secret = tmp / "secret";
  std::string logs, ckpt;

  Job() {
    sia::test::require_root("running jobs as nobody");
    auto a = sia::os::find_account("nobody");
    REQUIRE(a);
    nobody = *a;
    ::chmod(tmp.path().c_str(), 0711);
    std::ofstream(secret) << kSecret;
    ::chmod(secret.c_str(), 0600);
    state.bind_node("n0");
    launch.job = "j";
    launch.node = "n0";
    launch.gpu_type = "t4";
    launch.nodes = {sia::NodeGpus{"n0", {0}}};
    launch.command = {"/bin/true"};
    launch.generation = 1;
    launch.run_as = sia::RunAs{"nobody", "client:nobody", false};
    launch.ckpt_dir = ckpt = state.ckpt_dir("j", "");
    launch.report = state.report_path("j");
    RankLaunch r;
    r.log = state.rank_log("j", 0);
    launch.ranks = {r};
    logs = state.job_dir("j") + "/logs";
    state.write_launch(launch);
    sia::os::make_dirs(ckpt);
    sia::os::open_file(launch.report, sia::os::Access::append, true);
    give_job_files(launch, logs);
  }

  // Runs `script` as nobody (what the job itself can do), to its end.
  void as_nobody(const std::string& script) const {
    sia::os::SpawnOptions o;
    o.argv = {"/bin/sh", "-c", script};
    o.account = nobody;
    sia::os::Process p = sia::os::spawn(o);
    REQUIRE(p.exec_errno() == 0);
    REQUIRE(p.wait().success());
  }

  RankCommand rank(const std::string& script) const {
    RankCommand c;
    c.argv = {"/bin/sh", "-c", script};
    c.log = launch.ranks[0].log;
    c.header = "header";
    c.run_as = launch.run_as;
    c.node = "n0";
    return c;
  }

  // The secret as it was: same text, root's, mode 0600.
  void check_secret_intact() const {
    CHECK(slurp(secret) == kSecret);
    struct stat st = stat_of(secret);
    CHECK(st.st_uid == 0);
    CHECK(st.st_gid == 0);
    CHECK((st.st_mode & 07777) == 0600);
  }
};

LogRequest log_request(int tail) {
  LogRequest r;
  r.job = "j";
  r.tail = tail;
  return r;
}

}  // namespace

TEST_CASE("root: a rank log replaced by a link is not read back by a log fetch", "[root]") {
  Job job;
  job.as_nobody("ln -sf " + job.secret + " " + job.launch.ranks[0].log);
  CHECK(status_of([&] { rank_log_data(job.state, log_request(-1)); }) == 77);
  CHECK(status_of([&] { rank_log_data(job.state, log_request(5)); }) == 77);
  job.check_secret_intact();
}

TEST_CASE("root: a rank log that is a hard link or a FIFO is not read", "[root]") {
  Job job;
  const std::string log = job.launch.ranks[0].log;
  REQUIRE(::link(job.secret.c_str(), log.c_str()) == 0);  // fs.protected_hardlinks = 0
  CHECK(status_of([&] { rank_log_data(job.state, log_request(-1)); }) == 77);
  ::unlink(log.c_str());
  job.as_nobody("mkfifo " + log);  // a blocking open would wait for a writer for ever
  CHECK(status_of([&] { rank_log_data(job.state, log_request(-1)); }) == 77);
  job.check_secret_intact();
}

TEST_CASE("root: the launcher neither appends to nor gives away a planted log", "[root]") {
  Job job;
  const std::string log = job.launch.ranks[0].log;
  LocalLauncher l;
  job.as_nobody("ln -sf " + job.secret + " " + log);
  StartResult r = l.start(job.rank("echo ran"));
  CHECK(r.pid < 0);
  CHECK(r.error.find("refused: a symbolic link") != std::string::npos);
  ::unlink(log.c_str());
  REQUIRE(::link(job.secret.c_str(), log.c_str()) == 0);  // fs.protected_hardlinks = 0
  r = l.start(job.rank("echo ran"));
  CHECK(r.pid < 0);
  CHECK(r.error.find("refused: has 2 hard links") != std::string::npos);
  job.check_secret_intact();
}

TEST_CASE("root: a rank that swaps its log for a link gets nothing appended through it", "[root]") {
  Job job;
  const std::string log = job.launch.ranks[0].log;
  LocalLauncher l;
  StartResult r = l.start(job.rank("rm -f " + log + " && ln -s " + job.secret + " " + log));
  REQUIRE(r.pid > 0);
  WaitEvent ev = next_exit(l);  // root appends "rank 0 ... ended" now
  CHECK(ev.exit.success());
  job.check_secret_intact();
}

TEST_CASE("root: a rank's log is private and its user's", "[root]") {
  Job job;
  const mode_t old = ::umask(0);
  LocalLauncher l;
  StartResult r = l.start(job.rank("echo ran"));
  REQUIRE(r.pid > 0);
  next_exit(l);
  ::umask(old);
  struct stat st = stat_of(job.launch.ranks[0].log);
  CHECK(st.st_uid == job.nobody.uid);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(slurp(job.launch.ranks[0].log).rfind("header\nran\n", 0) == 0);
}

TEST_CASE("root: links at the checkpoint directory's names are neither read nor written through",
          "[root]") {
  Job job;
  std::ofstream(job.secret) << "99\n";  // a number, so that reading it through would show
  // The temporary names root used to write through (".NAME.tmp.PID"), and the files.
  const std::string pid = std::to_string(::getpid());
  job.as_nobody("cd " + job.ckpt + " && ln -s " + job.secret + " .generation.tmp." + pid +
                " && ln -s " + job.secret + " .finished.tmp." + pid + " && rm -f generation" +
                " && ln -s " + job.secret + " generation && ln -s " + job.secret + " finished");
  CHECK(sia::os::checkpoint_generation(job.ckpt) == 0);
  CHECK_FALSE(sia::os::checkpoint_finished(job.ckpt));
  sia::os::raise_checkpoint_generation(job.ckpt, 5);
  sia::os::mark_checkpoint_finished(job.ckpt, 5);
  CHECK(slurp(job.secret) == "99\n");
  CHECK(stat_of(job.secret).st_uid == 0);
  CHECK(sia::os::checkpoint_generation(job.ckpt) == 5);
}

TEST_CASE("root: a link at the checkpoint lock creates nothing and is refused", "[root]") {
  Job job;
  const std::string made = job.tmp / "made-by-root";
  job.as_nobody("cd " + job.ckpt + " && rm -f .lock && ln -s " + made + " .lock");
  CHECK(status_of([&] { sia::os::raise_checkpoint_generation(job.ckpt, 2); }) == 77);
  CHECK_FALSE(std::ifstream(made).good());
  job.as_nobody("rm -f " + job.ckpt + "/.lock");
  REQUIRE(::link(job.secret.c_str(), (job.ckpt + "/.lock").c_str()) == 0);
  CHECK(status_of([&] { sia::os::raise_checkpoint_generation(job.ckpt, 2); }) == 77);
  job.check_secret_intact();
}

TEST_CASE("root: handing a job its files never gives away what a link names", "[root]") {
  Job job;
  for (const char* name : {"generation", ".lock"}) {
    const std::string path = job.ckpt + "/" + name;
    ::unlink(path.c_str());
    REQUIRE(::link(job.secret.c_str(), path.c_str()) == 0);  // fs.protected_hardlinks = 0
    CHECK(status_of([&] { give_job_files(job.launch, job.logs); }) == 77);
    job.check_secret_intact();
    ::unlink(path.c_str());
    REQUIRE(::symlink(job.secret.c_str(), path.c_str()) == 0);
    CHECK(status_of([&] { give_job_files(job.launch, job.logs); }) == 77);
    job.check_secret_intact();
    ::unlink(path.c_str());
  }
}

TEST_CASE("root: what sia-run keeps about a job is private, whatever the umask", "[root]") {
  const mode_t old = ::umask(0);
  Job job;
  JobStatus s;
  s.job = "j";
  s.generation = 1;
  job.state.write_status(s);
  job.state.write_stop("j", StopRequest{1, 1, "why"});
  sia::os::raise_checkpoint_generation(job.ckpt, 1);
  give_job_files(job.launch, job.logs);
  ::umask(old);
  auto mode = [](const std::string& p) { return static_cast<int>(stat_of(p).st_mode & 07777); };
  const std::string dir = job.state.job_dir("j");
  for (const char* f : {"launch.json", "status.json", "stop.json"}) {
    CHECK(mode(dir + "/" + f) == 0600);
    CHECK(stat_of(dir + "/" + f).st_uid == 0);
  }
  CHECK(mode(job.state.root() + "/node") == 0600);
  CHECK(mode(job.state.root() + "/jobs") == 0711);
  CHECK(mode(dir) == 0711);
  for (const auto& d : {job.logs, job.ckpt}) {
    CHECK(mode(d) == 0700);
    CHECK(stat_of(d).st_uid == job.nobody.uid);
  }
  for (const auto& f : {job.launch.report, job.ckpt + "/generation", job.ckpt + "/.lock"}) {
    CHECK(mode(f) == 0600);
    CHECK(stat_of(f).st_uid == job.nobody.uid);
  }
  // A batch plan: root writes it, the job's account reads it.
  sia::os::write_file_atomic(job.state.batch_plan_path("j"), "{}\n", sia::os::kPrivateFile,
                             &job.nobody);
  CHECK(mode(job.state.batch_plan_path("j")) == 0600);
  CHECK(stat_of(job.state.batch_plan_path("j")).st_uid == job.nobody.uid);
  job.as_nobody("cat " + job.state.batch_plan_path("j") + " " + job.launch.report + " >/dev/null");
}
