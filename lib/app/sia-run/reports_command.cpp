// sia-run reports (commands.hpp).
#include <nlohmann/json.hpp>

#include "app/sia-run/commands.hpp"
#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/json_limits.hpp"
#include "core/log.hpp"
#include "exec/report_lines.hpp"

namespace sia::exec {

using nlohmann::json;

int run_reports(const ReportsArgs& args) {
  ReportReadOptions options;
  for (const auto& a : args.after) {
    auto [job, offset] = parse_after(a);
    options.after[job] = offset;
  }
  StateDir state(args.state_dir.empty() ? default_state_dir() : args.state_dir);
  std::vector<std::string> warnings;
  auto lines = read_report_lines(state, options, &warnings);
  for (const auto& w : warnings) log::info("warning: " + w);
  if (args.format == cli::Format::jsonl) {
    std::string out;
    for (const auto& r : lines) out += dump_json(report_line_to_json(r), false) + "\n";
    cli::write_stdout(out);
  } else if (args.format == cli::Format::table) {
    cli::Table t({"job", "offset", "round", "step", "progress", "reason"});
    for (const auto& r : lines) {
      json rep = parse_json_bounded(r.line);
      auto field = [&](const char* k) {
        if (!rep.is_object() || !rep.contains(k)) return std::string("-");
        const json& v = rep[k];
        if (v.is_string()) return v.get<std::string>();
        if (v.is_number_float()) return cli::fixed(v.get<double>(), 1);
        return v.dump();
      };
      t.add({r.job, std::to_string(r.offset), field("round"), field("step"), field("progress"),
             field("reason")});
    }
    cli::write_stdout(t.render());
  } else {
    json list = json::array();
    for (const auto& r : lines) list.push_back(report_line_to_json(r));
    std::string node = state.exists() ? state.bound_node() : "";
    cli::print_document("RunReports", json{{"generator", "sia-run"}},
                        json{{"node", node.empty() ? json(nullptr) : json(node)},
                             {"state_dir", state.root()},
                             {"lines", list}});
  }
  return 0;
}

}  // namespace sia::exec
