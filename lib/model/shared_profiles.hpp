// The profile store (Sia+; the Estimator keeps one, model/estimator.hpp): its modes, and
// its file. The file holds the throughput measurements jobs made, shared per catalog model,
// as JSON Lines of Profile documents (sia-formats(5)), one per model with its `model` set
// and its points in the order they were learnt. The simulator saves it with each round
// (--save-rounds, rNNNNNN-profiles.json), the controller keeps it in STATE/profiles.json,
// and sia-estimate --profiles reads it, so a saved round estimates the same through the
// pipe as in process.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/profile.hpp"

namespace sia {

// The profile store's modes: off; fit (a job's throughput model is fitted to its model's
// shared measurements too); scale_up (fit, and the scale-up rule counts the replicas the
// store's jobs ran with: a model seen on 8 GPUs may start at 16).
enum class ProfileStore { off, fit, scale_up };

// The default profile's (the simulator, sia-estimate, the controller; the reference
// profile has none).
inline constexpr ProfileStore kDefaultProfileStore = ProfileStore::scale_up;

// "off" | "fit" | "scale-up"; throws Error(usage) naming --profile-store otherwise.
ProfileStore parse_profile_store(const std::string& name);
std::string profile_store_name(ProfileStore store);

// The file's text: one Profile document per line (an empty store is an empty file).
std::string shared_profiles_document(const std::vector<Profile>& profiles,
                                     const nlohmann::json& metadata);
// Parses that text (from `file`, for messages). A document without a model, or a model
// given twice, is refused (Error(data), naming the file and the field).
std::vector<Profile> parse_shared_profiles(const std::string& text, const std::string& file);
// Reads a file ("-": stdin); an empty file is an empty store.
std::vector<Profile> read_shared_profiles(const std::string& file);

}  // namespace sia
