#include "ctl/slurm_batch.hpp"

#include <algorithm>

#include "exec/node_plan.hpp"
#include "exec/process_exit.hpp"
#include "slurm/job_mark.hpp"

namespace sia::ctl {

std::string slurm_gres_type(const slurm::SlurmSettings& settings, const std::string& type) {
  for (const auto& [gres, catalog] : settings.gres_types) {
    if (catalog == type) return gres;
  }
  return type;
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

static int node_count(const exec::JobLaunch& l) {
  return static_cast<int>(l.ranks.size());
}

// Whether every node holds the same number of ranks (one Slurm job component will do).
static bool uniform(const std::vector<exec::JobLaunch>& launches) {
  return std::all_of(launches.begin(), launches.end(), [&](const exec::JobLaunch& l) {
    return node_count(l) == node_count(launches.front());
  });
}

std::vector<std::string> sbatch_argv(const slurm::SlurmSettings& s,
                                     const std::vector<exec::JobLaunch>& launches,
                                     const std::string& script, const std::string& output,
                                     const std::string& token) {
  const exec::JobLaunch& first = launches.front();
  const std::string type = slurm_gres_type(s, first.gpu_type);
  const slurm::JobMark mark{first.job, first.generation, token};
  std::vector<std::string> argv = {"sbatch", "--parsable", "--output=" + output,
                                   "--open-mode=append", "--no-requeue"};
  // Every component carries the mark: each is a job of its own in Slurm's list.
  auto component = [&](const std::vector<const exec::JobLaunch*>& nodes) {
    argv.push_back("--job-name=" + slurm::mark_job_name(mark));
    argv.push_back("--comment=" + slurm::mark_comment(mark));
    std::string list;
    for (const auto* l : nodes) list += (list.empty() ? "" : ",") + l->node;
    const std::string n = std::to_string(node_count(*nodes.front()));
    argv.push_back("--nodes=" + std::to_string(nodes.size()));
    argv.push_back("--nodelist=" + list);
    argv.push_back("--ntasks-per-node=" + n);
    argv.push_back("--ntasks=" + std::to_string(nodes.size() * node_count(*nodes.front())));
    argv.push_back("--gres=gpu:" + type + ":" + n);
    if (!s.partition.empty()) argv.push_back("--partition=" + s.partition);
    if (!s.account.empty()) argv.push_back("--account=" + s.account);
  };
  if (uniform(launches)) {
    std::vector<const exec::JobLaunch*> all;
    for (const auto& l : launches) all.push_back(&l);
    component(all);
  } else {  // a heterogeneous job: one component per node
    for (std::size_t i = 0; i < launches.size(); ++i) {
      if (i) argv.push_back(":");
      component({&launches[i]});
    }
  }
  argv.push_back(script);
  return argv;
}

// The case branch of one rank: its directory, variables, log header, and the command.
static std::string rank_branch(const exec::JobLaunch& l, const exec::RankLaunch& r,
                               const std::string& ranks_file) {
  std::string out = "  " + shell_quoted(l.node + "/" + std::to_string(r.local_rank)) + ")\n";
  if (!l.cwd.empty()) out += "    cd " + shell_quoted(l.cwd) + " || exit 70\n";
  for (const auto& [k, v] : r.env) {
    if (k == "CUDA_VISIBLE_DEVICES") continue;  // Slurm's, picked above
    out += "    export " + k + "=" + shell_quoted(v) + "\n";
  }
  out += "    printf '%s\\n' " + shell_quoted(exec::rank_header(l, r)) + " >>" +
         shell_quoted(r.log) + "\n";
  // The worker runs as the task's child, so that the task records how it ended: a TERM
  // to the task (the stop's, forwarded to every process of the step) is the worker's to
  // take, the task waits on.
  out += "    trap : TERM\n   ";
  for (const auto& a : l.command) out += " " + shell_quoted(a);
  out += " >>" + shell_quoted(r.log) + " 2>&1 &\n";
  out += "    wait_step $!\n    s=$?\n    printf '%s %s\\n' " +
         shell_quoted(l.node + "/" + std::to_string(r.local_rank)) + " \"$s\" >>" +
         shell_quoted(ranks_file) + "\n    exit \"$s\"\n    ;;\n";
  return out;
}

// After a step on `node` ended with $s != 0: the first status a rank there recorded that is
// neither 0 nor 75 (nor, after the stop, 143: the forwarded TERM's) is the step's (srun
// reports the highest, which a 75 beside it would hide); with none, a stopped step is 75.
static std::string rank_failure(const std::string& node, const std::string& ranks_file) {
  const std::string stopped = std::to_string(exec::kPreemptedExit);
  return "if [ \"$s\" != 0 ]; then\n"
         "  b=$(awk -v n=" +
         node +
         " -v stop=\"$stop\" '{ split($1, a, \"/\") } a[1] == n && NF == 2 && $2 != 0 && $2 != " +
         stopped + " && !(stop == 1 && $2 == 143) { print $2; exit }' " + shell_quoted(ranks_file) +
         " 2>/dev/null)\n"
         "  if [ -n \"$b\" ]; then\n"
         "    echo \"sia: a rank on \"" +
         node +
         "\" exited $b: the job failed\" >&2\n"
         "    s=$b\n"
         "  elif [ \"$stop\" = 1 ]; then\n"
         "    s=" +
         stopped + "\n  fi\nfi";
}

// Batch mode: one step per node, then the first failure's status. SIGTERM to the script
// (the controller's `scancel --batch --signal=TERM`) starts no step that has not started
// and forwards TERM to the steps' ranks every second until they end (a rank that was still
// starting gets it too); a step that then ends other than 0 counts as checkpoint-stopped
// (75), and so does a step the stop kept from starting.
static std::string batch_steps(const std::vector<exec::JobLaunch>& launches,
                               const std::string& type, const std::string& script,
                               const std::string& scancel, const std::string& ranks_file) {
  // The ranks' lines are this run's only (a generation submitted again starts afresh).
  std::string out = ": >" + shell_quoted(ranks_file) +
                    "\n"
                    "stop=0 fwd=\n"
                    "trap 'stop=1; [ -n \"$fwd\" ] || { forward & fwd=$!; }' TERM\n"
                    "forward() {\n"
                    "  trap - TERM\n"
                    "  while :; do\n"
                    "    " +
                    shell_quoted(scancel) +
                    " --signal=TERM \"${SLURM_JOB_ID-}\" >/dev/null 2>&1\n"
                    "    sleep 1\n"
                    "  done\n"
                    "}\n";

  const bool het = !uniform(launches);
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const auto& l = launches[i];
    const std::string n = std::to_string(l.ranks.size());
    out += "p" + std::to_string(i) + "=\n[ \"$stop\" = 1 ] || { srun --nodes=1 --ntasks=" + n +
           " --nodelist=" + shell_quoted(l.node) +
           (het ? " --het-group=" + std::to_string(i) : std::string()) +
           " --gres=gpu:" + shell_quoted(type) + ":" + n + " --kill-on-bad-exit=0 /bin/sh " +
           shell_quoted(script) + " rank & p" + std::to_string(i) + "=$!; }\n";
  }
  out += "st=0\n";
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const std::string p = "$p" + std::to_string(i);
    const std::string node = shell_quoted(launches[i].node);
    out += "if [ -n \"" + p + "\" ]; then wait_step \"" + p + "\"; s=$?; else s=75; fi\n" +
           "if [ \"$s\" != 0 ] && ! awk -F/ -v n=" + node +
           " '$1 == n { f = 1 } END { exit !f }' " + shell_quoted(ranks_file) +
           " 2>/dev/null; then\n"
           "  echo \"sia: the step on \"" +
           node +
           "\" started no rank (srun exited $s): counted as stopped (75)\" >&2\n"
           "  s=75\nfi\n" +
           rank_failure(node, ranks_file) + "\n[ \"$st\" = 0 ] && st=$s\n";
  }
  out += "[ -n \"$fwd\" ] && kill \"$fwd\" 2>/dev/null\n";
  return out;
}

std::string slurm_batch_script(const std::vector<exec::JobLaunch>& launches,
                               const std::string& type, const std::string& script,
                               const std::string& exit_file, const std::string& scancel) {
  const exec::JobLaunch& first = launches.front();
  const std::string ranks_file = exit_file + ".ranks";
  std::string out = "#!/bin/sh\n# sia: job " + first.job + " generation " +
                    std::to_string(first.generation) +
                    " (written by sia-ctl; the ranks re-enter it with \"rank\")\n";
  out +=
      "# wait_step PID: PID's exit status, past the waits a trapped TERM cuts short\n"
      "wait_step() {\n"
      "  while :; do\n"
      "    wait \"$1\"\n"
      "    s=$?\n"
      "    [ \"$s\" -gt 128 ] && kill -0 \"$1\" 2>/dev/null && continue\n"
      "    return \"$s\"\n"
      "  done\n"
      "}\n";
  // Rank mode: this task's GPU is the LOCALID-th of the step's (Slurm binds them).
  out +=
      "if [ \"${1-}\" = rank ]; then\n"
      "  i=0\n"
      "  for g in $(printf '%s' \"${CUDA_VISIBLE_DEVICES-}\" | tr ',' ' '); do\n"
      "    [ \"$i\" = \"${SLURM_LOCALID-}\" ] && CUDA_VISIBLE_DEVICES=$g && export "
      "CUDA_VISIBLE_DEVICES\n"
      "    i=$((i + 1))\n"
      "  done\n"
      "  printf '%s\\n' \"${SLURMD_NODENAME-}/${SLURM_LOCALID-}\" >>" +
      shell_quoted(ranks_file) +
      "\n"
      "  case \"${SLURMD_NODENAME-}/${SLURM_LOCALID-}\" in\n";
  for (const auto& l : launches) {
    for (const auto& r : l.ranks) out += rank_branch(l, r, ranks_file);
  }
  out += "  esac\n  echo \"sia: job " + first.job +
         ": no rank for node ${SLURMD_NODENAME-?} task ${SLURM_LOCALID-?}\" >&2\n"
         "  exit 70\nfi\n";
  out += batch_steps(launches, type, script, scancel, ranks_file);
  out += "printf '%s\\n' \"$st\" >" + shell_quoted(exit_file + ".tmp") + " && mv -f " +
         shell_quoted(exit_file + ".tmp") + " " + shell_quoted(exit_file) + "\nexit \"$st\"\n";
  return out;
}

}  // namespace sia::ctl
