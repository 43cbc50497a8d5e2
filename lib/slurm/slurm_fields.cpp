#include "slurm/slurm_fields.hpp"

#include <charconv>

#include "core/error.hpp"

namespace sia::slurm {

namespace {

bool is_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':' || c == '/' || c == '.';
}

// "KEY=..." with KEY starting with a letter.
std::size_t key_length(std::string_view word) {
  if (word.empty() || !((word[0] >= 'A' && word[0] <= 'Z') || (word[0] >= 'a' && word[0] <= 'z'))) {
    return 0;
  }
  std::size_t i = 0;
  while (i < word.size() && is_key_char(word[i])) ++i;
  return i < word.size() && word[i] == '=' ? i : 0;
}

[[noreturn]] void bad(const std::string& what, std::string_view text, const std::string& expected) {
  std::string shown(text.substr(0, 120));
  throw Error(ExitStatus::data, what + ": expected " + expected + ", got \"" + shown + "\"");
}

bool parse_long(std::string_view s, long& out) {
  if (s.empty() || s.size() > 12) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

// Splits on commas outside brackets/parentheses.
std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[' || s[i] == '(') ++depth;
    if ((s[i] == ']' || s[i] == ')') && depth > 0) --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

bool none(std::string_view s) {
  return s.empty() || s == "(null)" || s == "N/A" || s == "None";
}

}  // namespace

const std::string* Fields::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string Fields::get(std::string_view key) const {
  const std::string* v = find(key);
  return v ? *v : std::string();
}

Fields split_fields(std::string_view line) {
  Fields f;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end == i) break;
    std::string_view word = line.substr(i, end - i);
    if (std::size_t k = key_length(word)) {
      f.items.emplace_back(std::string(word.substr(0, k)), std::string(word.substr(k + 1)));
    } else if (!f.items.empty()) {
      f.items.back().second += " ";
      f.items.back().second += word;
    }
    i = end;
  }
  return f;
}

std::vector<std::string> expand_hostlist(std::string_view list) {
  std::vector<std::string> hosts;
  if (none(list)) return hosts;
  const std::string what = "slurm: node list";
  for (std::string_view item : split_top(list)) {
    auto open = item.find('[');
    if (item.empty()) bad(what, list, "node names separated by commas");
    if (open == std::string_view::npos) {
      if (item.find_first_of("]()") != std::string_view::npos) bad(what, list, "a node list");
      hosts.emplace_back(item);
      continue;
    }
    auto close = item.find(']', open);
    if (close == std::string_view::npos || item.find('[', open + 1) < close) {
      bad(what, list, "a node list with one [ranges] per name");
    }
    std::string prefix(item.substr(0, open));
    std::string suffix(item.substr(close + 1));
    if (suffix.find_first_of("[]") != std::string::npos) bad(what, list, "one [ranges] per name");
    for (std::string_view range : split_top(item.substr(open + 1, close - open - 1))) {
      auto dash = range.find('-');
      std::string_view lo_s = range.substr(0, dash);
      std::string_view hi_s = dash == std::string_view::npos ? lo_s : range.substr(dash + 1);
      long lo = 0, hi = 0;
      if (!parse_long(lo_s, lo) || !parse_long(hi_s, hi) || hi < lo) {
        bad(what, list, "ranges like 1-3,7");
      }
      if (static_cast<std::size_t>(hi - lo) >= kMaxHosts ||
          hosts.size() + static_cast<std::size_t>(hi - lo) >= kMaxHosts) {
        bad(what, list, "at most " + std::to_string(kMaxHosts) + " nodes");
      }
      for (long n = lo; n <= hi; ++n) {
        std::string digits = std::to_string(n);
        if (digits.size() < lo_s.size()) digits.insert(0, lo_s.size() - digits.size(), '0');
        hosts.push_back(prefix + digits + suffix);
      }
    }
  }
  return hosts;
}

std::vector<GpuGres> parse_gpu_gres(std::string_view list, const std::string& what) {
  std::vector<GpuGres> out;
  if (none(list)) return out;
  for (std::string_view entry : split_top(list)) {
    if (auto paren = entry.find('('); paren != std::string_view::npos) {
      entry = entry.substr(0, paren);
    }
    // gres:gpu:... in TRES-per-node fields.
    if (entry.substr(0, 5) == "gres:" || entry.substr(0, 5) == "gres/") entry.remove_prefix(5);
    if (entry.substr(0, 3) != "gpu") continue;
    if (entry.size() > 3 && entry[3] != ':') continue;  // another GRES (gpumem...)
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= entry.size(); ++i) {
      if (i == entry.size() || entry[i] == ':') {
        parts.push_back(entry.substr(start, i - start));
        start = i + 1;
      }
    }
    GpuGres g;
    long n = 0;
    if (parts.size() == 2 && parse_long(parts[1], n)) {
      g.count = n;
    } else if (parts.size() == 3 && !parts[1].empty() && parse_long(parts[2], n)) {
      g.type = std::string(parts[1]);
      g.count = n;
    } else if (parts.size() == 2 && !parts[1].empty()) {
      g.type = std::string(parts[1]);  // gpu:TYPE: one
      g.count = 1;
    } else if (parts.size() == 1) {
      g.count = 1;
    } else {
      bad(what, list, "GRES like gpu:TYPE:COUNT");
    }
    out.push_back(g);
  }
  return out;
}

void for_each_record(std::string_view text,
                     const std::function<void(std::string_view, std::size_t)>& record) {
  std::size_t line_no = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++line_no;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (line.substr(0, 3) == "No ") continue;  // "No jobs in the system"
    record(line, line_no);
  }
}

}  // namespace sia::slurm
