#include "core/compat.hpp"

#include "core/error.hpp"

namespace sia {

Compat parse_compat(std::string_view text) {
  if (text == "default") return Compat::standard;
  if (text == "reference") return Compat::reference;
  throw Error(ExitStatus::usage, "--compat: unknown profile \"" + std::string(text) +
                                     "\" (known: default, reference)");
}

const char* compat_name(Compat compat) {
  return compat == Compat::reference ? "reference" : "default";
}

std::vector<std::string> compat_names() {
  return {compat_name(Compat::standard), compat_name(Compat::reference)};
}

}  // namespace sia
