#include "slurm/slurm_accounting.hpp"

#include <algorithm>
#include <charconv>

#include "core/error.hpp"

namespace sia::slurm {

namespace {

constexpr double kSacctTimeout = 60;

// A non-negative decimal integer of at most 9 digits, or -1.
long small_number(std::string_view s) {
  if (s.empty() || s.size() > 9) return -1;
  long v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v >= 0 ? v : -1;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

}  // namespace

std::vector<std::string> sacct_args(const std::vector<long>& ids) {
  std::string list;
  for (long id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  return {"sacct", "-X", "-n", "-P", "-j", list, "-o", "JobID,State,Elapsed,ExitCode"};
}

double parse_elapsed(std::string_view text, const std::string& what) {
  const auto bad = [&] {
    return Error(ExitStatus::data, what + ": expected [DD-[HH:]]MM:SS, got \"" +
                                       std::string(text.substr(0, 40)) + "\"");
  };
  long days = 0;
  std::string_view clock = text;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    days = small_number(text.substr(0, dash));
    if (days < 0) throw bad();
    clock = text.substr(dash + 1);
  }
  auto parts = split(clock, ':');
  if (parts.size() < 2 || parts.size() > 3 || (days > 0 && parts.size() != 3)) throw bad();
  double seconds = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const long v = small_number(parts[i]);
    if (v < 0 || (i > 0 && v > 59)) throw bad();
    seconds = seconds * 60 + static_cast<double>(v);
  }
  return seconds + static_cast<double>(days) * 86400;
}

std::map<long, AccountedJob> parse_sacct(std::string_view text) {
  std::map<long, AccountedJob> out;
  std::size_t line_no = 0;
  for (auto line : split(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = "slurm: sacct: line " + std::to_string(line_no);
    auto f = split(line, '|');
    if (f.size() != 4) {
      throw Error(ExitStatus::data, where + ": expected JobID|State|Elapsed|ExitCode, got " +
                                        std::to_string(f.size()) + " fields");
    }
    // "ID", "ID+COMPONENT" (a heterogeneous job), "ID_TASK" (an array: not sia's).
    std::string_view id_text = f[0].substr(0, f[0].find('+'));
    AccountedJob j;
    j.id = small_number(id_text);
    if (j.id <= 0) throw Error(ExitStatus::data, where + ": JobID: expected a job id");
    const bool component = id_text.size() != f[0].size();
    if (component && f[0].substr(id_text.size() + 1) != "0") continue;  // the first one counts
    const std::string at = where + " (job " + std::to_string(j.id) + ")";
    j.state = std::string(f[1].substr(0, f[1].find(' ')));  // "CANCELLED by 0"
    // A Slurm job state is a word of capitals and '_' (COMPLETED, OUT_OF_MEMORY): other
    // bytes would reach history's JSON, which holds text only.
    const bool word = !j.state.empty() && j.state.size() <= 32 &&
                      std::all_of(j.state.begin(), j.state.end(),
                                  [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
    if (!word) {
      throw Error(ExitStatus::data, at + ": State: expected a Slurm job state (A-Z and _)");
    }
    j.elapsed = parse_elapsed(f[2], at + ": Elapsed");
    auto code = split(f[3], ':');
    const long status = code.size() == 2 ? small_number(code[0]) : -1;
    const long signal = code.size() == 2 ? small_number(code[1]) : -1;
    if (status < 0 || status > 255 || signal < 0 || signal > 255) {
      throw Error(ExitStatus::data, at + ": ExitCode: expected STATUS:SIGNAL");
    }
    j.exit_code = static_cast<int>(status);
    j.exit_signal = static_cast<int>(signal);
    out[j.id] = j;
  }
  return out;
}

Accounting read_accounting(CommandRunner& runner, const std::vector<long>& ids) {
  Accounting a;
  if (ids.empty()) {
    a.available = true;
    return a;
  }
  CommandResult r = runner.run(sacct_args(ids), kSacctTimeout);
  if (!r.ran || r.status != 0) {
    const std::string& said = r.err.empty() ? r.out : r.err;
    const std::string why = said.substr(0, std::min<std::size_t>(said.find('\n'), 200));
    if (why.find("accounting storage is disabled") != std::string::npos) {
      a.note =
          "Slurm keeps no accounting here (sacct: accounting storage is disabled): "
          "no Slurm figures";
    } else {
      a.note = "sacct failed (" + (why.empty() ? "exit status " + std::to_string(r.status) : why) +
               "): no Slurm figures";
    }
    return a;
  }
  try {
    a.jobs = parse_sacct(r.out);
    a.available = true;
  } catch (const Error& e) {
    a.note = std::string(e.what()) + ": no Slurm figures";
  }
  return a;
}

}  // namespace sia::slurm
