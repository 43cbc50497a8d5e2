// sia-ctl fsck: the state directory checked (and with --repair, salvaged) under its lock
// (ctl/fsck.hpp).
#include <optional>
#include <string>

#include "app/sia-ctl/commands.hpp"
#include "core/cluster.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "ctl/fsck.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/state_store.hpp"

namespace sia::ctl {

int run_fsck_command(const CtlArgs& args, bool repair) {
  Settings config = config_of(args);
  StateStore store(config.controller.state_dir);
  store.check_exists();
  // The lock a round or serve holds: nothing is checked, let alone repaired, under a
  // live controller (status 75 while one runs).
  exec::StateLock lock = store.lock(repair ? "sia-ctl fsck --repair" : "sia-ctl fsck");
  // The configured cluster, for leases.json's nodes; one that does not read is not the
  // state directory's damage: said, and those nodes left unchecked.
  std::optional<Cluster> cluster;
  if (!config.controller.cluster.empty()) {
    try {
      cluster = read_cluster(config.controller.cluster);
    } catch (const Error& e) {
      log::info(std::string("warning: ") + e.what() +
                "; the nodes of leases.json are not checked against the cluster");
    }
  }
  FsckReport report = fsck(store, repair, wall_clock(), cluster ? &*cluster : nullptr);
  if (args.format == cli::Format::table) {
    cli::write_stdout(fsck_table(report));
  } else {
    nlohmann::json doc = {{"apiVersion", kApiVersion},
                          {"kind", "Fsck"},
                          {"metadata", {{"generator", "sia-ctl fsck"}}},
                          {"data", fsck_to_json(report)}};
    cli::write_stdout(dump_json(doc, cli::stdout_is_tty()) + "\n");
  }
  return report.clean() || report.repaired ? 0 : to_int(ExitStatus::data);
}

}  // namespace sia::ctl
