// The batch script itself (ctl/slurm_batch.hpp), run by /bin/sh with a stand-in srun (it
// starts a step's tasks as Slurm would, SLURMD_NODENAME and SLURM_LOCALID set, and exits
// with the highest status, as srun does) and scancel (it sends TERM to the workers): how
// the ranks' own statuses make the generation's.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ctl/slurm_batch.hpp"
#include "ctl_test_util.hpp"

using sia::ctl::test::TempDir;
using sia::ctl::test::write_text;
using sia::exec::test::slurp;

namespace {

// One node "n1" with two ranks, each a worker that reads what to do from DIR: now-RANK
// (exit at once with it) or term-RANK (on TERM, exit with it; "kill": TERM's default).
struct Batch {
  TempDir dir;
  std::string script = dir / "gen-1.sh";
  std::string exit_file = dir / "gen-1.exit";

  Batch() {
    std::filesystem::create_directories(dir / "bin");
    write_text(dir / "bin/srun",
               "#!/bin/sh\nn=1 node=\nwhile [ $# -gt 0 ]; do\n  case $1 in\n"
               "  --ntasks=*) n=${1#--ntasks=} ;;\n  --nodelist=*) node=${1#--nodelist=} ;;\n"
               "  --*) ;;\n  *) break ;;\n  esac\n  shift\ndone\n"
               "pids= i=0\nwhile [ $i -lt $n ]; do\n"
               "  SLURMD_NODENAME=$node SLURM_LOCALID=$i \"$@\" & pids=\"$pids $!\"\n"
               "  i=$((i + 1))\ndone\nst=0\n"
               "for p in $pids; do wait $p; s=$?; [ $s -gt $st ] && st=$s; done\nexit $st\n");
    write_text(dir / "bin/scancel",
               "#!/bin/sh\nfor p in $(cat " + dir / "pids" +
                   " 2>/dev/null); do kill -TERM $p 2>/dev/null; done\nexit 0\n");
    write_text(dir / "worker.sh",
               "d=" + dir.path() +
                   "\nn=$(cat $d/now-$RANK 2>/dev/null)\n[ -n \"$n\" ] && exit \"$n\"\n"
                   "t=$(cat $d/term-$RANK)\n[ \"$t\" = kill ] || trap \"exit $t\" TERM\n"
                   "echo $$ >>$d/pids\nwhile :; do sleep 0.1; done\n");
    std::filesystem::permissions(dir / "bin/srun", std::filesystem::perms::owner_all);
    std::filesystem::permissions(dir / "bin/scancel", std::filesystem::perms::owner_all);
    sia::exec::JobLaunch l;
    l.job = "j";
    l.node = "n1";
    l.gpu_type = "t4";
    l.generation = 1;
    l.cwd = dir.path();
    l.command = {"/bin/sh", dir / "worker.sh"};
    for (int r = 0; r < 2; ++r) {
      sia::exec::RankLaunch rank;
      rank.rank = rank.local_rank = r;
      rank.log = dir / ("rank-" + std::to_string(r) + ".log");
      rank.env = {{"RANK", std::to_string(r)}};
      l.ranks.push_back(rank);
    }
    write_text(script,
               sia::ctl::slurm_batch_script({l}, "t4", script, exit_file, dir / "bin/scancel"));
  }

  // Runs the script; with `stop`, sends it TERM once both workers wait for theirs. Returns
  // the status it wrote to the exit file, checking that it exited with the same.
  std::string run(bool stop) {
    const std::string d = dir.path();
    std::string cmd = "cd " + d + " && PATH=" + d + "/bin:$PATH /bin/sh gen-1.sh 2>err & b=$!; ";
    if (stop) {
      cmd += "i=0; while [ \"$(cat " + d +
             "/pids 2>/dev/null | wc -l)\" -lt 2 ] && [ $i -lt 400 ]; "
             "do sleep 0.05; i=$((i + 1)); done; kill -TERM $b; ";
    }
    cmd += "wait $b; echo $? >" + d + "/rc";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::string written = slurp(exit_file);
    CHECK(slurp(dir / "rc") == written);
    return written;
  }
};

}  // namespace

TEST_CASE("a checkpoint-stop is 75 only when every rank stopped", "[slurm_batch]") {
  Batch b;
  SECTION("both ranks wrote their checkpoint and exited 75") {
    write_text(b.dir / "term-0", "75");
    write_text(b.dir / "term-1", "75");
    CHECK(b.run(true) == "75\n");
  }
  SECTION("a rank ended by the TERM itself (143) counts as stopped") {
    write_text(b.dir / "term-0", "75");
    write_text(b.dir / "term-1", "kill");
    CHECK(b.run(true) == "75\n");
  }
  SECTION("a rank's own failure during the stop is the job's failure, with its status") {
    write_text(b.dir / "term-0", "75");
    write_text(b.dir / "term-1", "3");
    CHECK(b.run(true) == "3\n");
    CHECK(slurp(b.dir / "err").find("sia: a rank on n1 exited 3: the job failed") !=
          std::string::npos);
  }
}

TEST_CASE("without a stop, a failing rank beside a 75 is the job's failure", "[slurm_batch]") {
  Batch b;
  write_text(b.dir / "now-0", "75");
  write_text(b.dir / "now-1", "2");
  CHECK(b.run(false) == "2\n");
  write_text(b.dir / "now-1", "75");
  CHECK(b.run(false) == "75\n");
}
