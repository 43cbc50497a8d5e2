#include "model/shared_profiles.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"

namespace sia {

ProfileStore parse_profile_store(const std::string& name) {
  if (name == "off") return ProfileStore::off;
  if (name == "fit") return ProfileStore::fit;
  if (name == "scale-up") return ProfileStore::scale_up;
  throw Error(ExitStatus::usage,
              "--profile-store: expected off, fit or scale-up, got \"" + name + "\"");
}

std::string profile_store_name(ProfileStore store) {
  switch (store) {
    case ProfileStore::off:
      return "off";
    case ProfileStore::fit:
      return "fit";
    case ProfileStore::scale_up:
      return "scale-up";
  }
  return "off";
}

std::string shared_profiles_document(const std::vector<Profile>& profiles,
                                     const nlohmann::json& metadata) {
  std::string out;
  for (const auto& p : profiles) {
    out += dump_document("Profile", metadata, profile_to_json(p), false);
    out += '\n';
  }
  return out;
}

std::vector<Profile> parse_shared_profiles(const std::string& text, const std::string& file) {
  std::vector<Profile> out;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return out;
  std::set<std::string> seen;
  for (const Document& d : parse_documents(text, file, {"Profile"})) {
    const Node data = d.data();
    Profile p = parse_profile(data);
    const Node model = data.at("model");  // required in the store
    if (p.model.empty()) model.expected("the catalog model the shared measurements are of");
    if (!seen.insert(p.model).second) {
      model.fail("\"" + p.model + "\" is given twice; expected one Profile per model");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Profile> read_shared_profiles(const std::string& file) {
  return parse_shared_profiles(read_input(file), display_name(file));
}

}  // namespace sia
