// The pieces of Slurm's one-line records (`scontrol -o show node|job`): a line split into
// KEY=VALUE fields, hostlist expressions (n[1-3,7],gpu-a) expanded, and GRES lists
// (gpu:a100:4(S:0-1),gpu:t4:2(IDX:0-1)) read. Every function takes any text: malformed
// input is one Error(data) line naming what was expected, never a crash.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sia::slurm {

// A record's fields in the order seen. A word without "KEY=" belongs to the value before
// it (values with spaces: Comment, Reason); values stay as Slurm wrote them.
struct Fields {
  std::vector<std::pair<std::string, std::string>> items;
  // The first value of `key`, or nullptr.
  const std::string* find(std::string_view key) const;
  std::string get(std::string_view key) const;  // "" when absent
};
Fields split_fields(std::string_view line);

// Calls `record(line, line_no)` for each record line of `scontrol -o show` output: blank
// lines and Slurm's "No ... in the system" are skipped; line_no counts from 1.
void for_each_record(std::string_view text,
                     const std::function<void(std::string_view, std::size_t)>& record);

// "n[1-3,07-08],x" -> n1 n2 n3 n07 n08 x (zero padding kept); "(null)" or "" -> none.
// At most kMaxHosts names: more is an error.
constexpr std::size_t kMaxHosts = 100000;
std::vector<std::string> expand_hostlist(std::string_view list);

// One GPU entry of a GRES list: gpu:TYPE:COUNT (TYPE "" when untyped: gpu:COUNT).
struct GpuGres {
  std::string type;
  long count = 0;
  bool operator==(const GpuGres&) const = default;
};
// The GPU entries of a GRES list ("gpu:a100:4(S:0-1),shard:2,gpu:t4:2(IDX:0-1)"); other
// GRES names are skipped; "(null)", "N/A" and "" are none. Throws Error(data) naming `what`.
std::vector<GpuGres> parse_gpu_gres(std::string_view list, const std::string& what);

}  // namespace sia::slurm
