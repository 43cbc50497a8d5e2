#include "core/error_list.hpp"

namespace sia {

std::string one_line(std::string_view message) {
  std::string out(message);
  for (std::size_t nl; (nl = out.find('\n')) != std::string::npos;) out.replace(nl, 1, "; ");
  return out;
}

void ErrorList::add(const Error& e) {
  if (lines_.empty()) status_ = e.status();
  const std::string_view what = e.what();
  for (std::size_t pos = 0; pos < what.size();) {
    std::size_t nl = what.find('\n', pos);
    if (nl == std::string_view::npos) nl = what.size();
    const std::string_view line = what.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    // The same line twice (a field every trial of an app shares) is said once.
    bool seen = false;
    for (std::size_t at = 0; !seen && at < lines_.size();) {
      std::size_t end = lines_.find('\n', at);
      if (end == std::string::npos) end = lines_.size();
      seen = std::string_view(lines_).substr(at, end - at) == line;
      at = end + 1;
    }
    if (seen) continue;
    if (!lines_.empty()) lines_ += '\n';
    lines_ += line;
  }
}

void ErrorList::throw_if_any() const {
  if (!lines_.empty()) throw Error(status_, lines_);
}

}  // namespace sia
