#include "sim/workload.hpp"

#include <algorithm>
#include <set>

#include "core/csv.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/names.hpp"
#include "sim/workload_deadlines.hpp"

namespace sia {

std::vector<JobSpec> parse_workload_csv(std::string_view text, const std::string& file,
                                        const Catalog& catalog) {
  CsvTable t(text, file);
  const int cn = t.column("name"), ct = t.column("time"), ca = t.column("application");
  const int cr = t.column("num_replicas"), cb = t.column("batch_size");
  const int cc = t.has_column("category") ? t.column("category") : -1;
  const DeadlineColumns cd = deadline_columns(t);
  std::vector<JobSpec> out;
  std::set<std::string> names;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    JobSpec s;
    s.name = t.cell(r, cn);
    if (!valid_job_name(s.name)) t.fail(r, cn, "expected a job name of " + std::string(kNameRule));
    if (!names.insert(s.name).second) t.fail(r, cn, "duplicate job \"" + s.name + "\"");
    s.submit_time = t.number(r, ct);
    if (!(s.submit_time >= 0 && s.submit_time <= kMaxSeconds)) {
      t.fail(r, ct, "expected a time from 0 to 1e9 seconds");
    }
    s.model = t.cell(r, ca);
    if (!catalog.has(s.model)) {
      std::string known;
      for (const auto& n : catalog.names()) known += (known.empty() ? "" : ", ") + n;
      t.fail(r, ca, "unknown model \"" + s.model + "\" (catalog has: " + known + ")");
    }
    long long reps = t.integer(r, cr);
    if (reps < 1 || reps > 100000) t.fail(r, cr, "expected a positive GPU count");
    s.gpus = static_cast<int>(reps);
    s.batch_size = t.number(r, cb);
    if (!(s.batch_size >= 1 && s.batch_size <= kMaxBatchSize)) {
      t.fail(r, cb, "expected a batch size from 1 to 1000000000");
    }
    if (cc >= 0 && !t.cell(r, cc).empty()) {
      const std::string& c = t.cell(r, cc);
      if (c == "adaptive") {
        s.adaptivity = Adaptivity::adaptive;
      } else if (c == "scale-gpus" || c == "strong-scaling") {
        s.adaptivity = Adaptivity::strong_scaling;
      } else if (c == "rigid") {
        s.adaptivity = Adaptivity::rigid;
      } else {
        t.fail(r, cc,
               "expected adaptive, scale-gpus (or strong-scaling) or rigid, got \"" + c + "\"");
      }
    }
    read_deadline_cells(t, r, cd, s);
    out.push_back(std::move(s));
  }
  if (out.empty()) throw Error(ExitStatus::data, file + ": no jobs (a header but no rows)");
  std::stable_sort(out.begin(), out.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit_time < b.submit_time;
  });
  return out;
}

std::vector<JobSpec> read_workload(const std::string& file, const Catalog& catalog,
                                   std::vector<AppSpec>* apps) {
  return parse_workload(read_input(file), file, catalog, apps);
}

std::vector<JobSpec> parse_workload(std::string_view text, const std::string& file,
                                    const Catalog& catalog, std::vector<AppSpec>* apps) {
  const bool csv = file.size() >= 4 && file.compare(file.size() - 4, 4, ".csv") == 0;
  if (csv) return parse_workload_csv(text, display_name(file), catalog);
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw Error(ExitStatus::data, display_name(file) + ": empty workload");
  }
  std::vector<JobSpec> out;
  std::set<std::string> names;
  std::set<std::string> app_names;
  for (const auto& d : parse_documents(text, file, {"JobSpec", "Jobs", "App"})) {
    auto add_spec = [&](const Node& n, JobSpec s) {
      if (!names.insert(s.name).second) n.at("name").fail("duplicate job \"" + s.name + "\"");
      if (!s.model.empty() && !catalog.has(s.model)) {
        n.at("model").fail("unknown model \"" + s.model + "\"");
      }
      out.push_back(std::move(s));
    };
    auto add = [&](const Node& n) { add_spec(n, parse_sim_job_spec(n)); };
    if (d.kind == "App") {
      AppSpec a = parse_app_spec(d.data());
      if (!app_names.insert(a.name).second)
        d.data().at("name").fail("duplicate app \"" + a.name + "\"");
      for (auto& t : expand_trials(a, display_name(file))) {
        Node tn = d.data().at("template");
        if (names.count(t.name)) tn.fail("trial \"" + t.name + "\" duplicates a job name");
        if (!t.model.empty() && !catalog.has(t.model)) {
          tn.fail("unknown model \"" + t.model + "\"");
        }
        add_spec(tn, std::move(t));
      }
      if (apps) apps->push_back(std::move(a));
    } else if (d.kind == "JobSpec") {
      add(d.data());
    } else {
      d.data().at("jobs").each(add);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit_time < b.submit_time;
  });
  return out;
}

}  // namespace sia
