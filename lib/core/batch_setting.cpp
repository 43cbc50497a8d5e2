#include "core/batch_setting.hpp"

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/node.hpp"

namespace sia {

std::optional<std::int64_t> batch_product(std::int64_t local, std::int64_t replicas,
                                          std::int64_t accum_steps) {
  if (local < 0 || replicas < 0 || accum_steps < 0 || accum_steps >= kMaxGlobalBatch) {
    return std::nullopt;
  }
  std::int64_t v = 0;
  if (__builtin_mul_overflow(local, replicas, &v) ||
      __builtin_mul_overflow(v, accum_steps + 1, &v) || v > kMaxGlobalBatch) {
    return std::nullopt;
  }
  return v;
}

BatchSetting batch_of(int local, std::int64_t replicas, int accum_steps) {
  auto product = batch_product(local, replicas, accum_steps);
  if (!product) {
    throw Error(ExitStatus::data, "batch: local_bsz " + std::to_string(local) + " x " +
                                      std::to_string(replicas) + " replicas x (accum_steps " +
                                      std::to_string(accum_steps) + " + 1) is not from 0 to " +
                                      std::to_string(kMaxGlobalBatch));
  }
  return BatchSetting{*product, local, accum_steps};
}

std::string batch_mismatch(const BatchSetting& b, std::int64_t replicas) {
  auto product = batch_product(b.local, replicas, b.accum_steps);
  if (product && *product == b.global) return "";
  const std::string of = "local_bsz " + std::to_string(b.local) + " x " + std::to_string(replicas) +
                         " replicas x (accum_steps " + std::to_string(b.accum_steps) + " + 1)";
  if (!product) return of + " is not from 0 to " + std::to_string(kMaxGlobalBatch);
  return "batch_size " + std::to_string(b.global) + " is not " + of + " = " +
         std::to_string(*product);
}

std::optional<std::int64_t> global_batch_of(double wire) {
  if (!std::isfinite(wire) || wire != std::floor(wire) || wire < 0 ||
      wire > static_cast<double>(kMaxGlobalBatch)) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(wire);
}

void put_batch_setting(nlohmann::json& obj, const BatchSetting& b) {
  obj["batch_size"] = static_cast<double>(b.global);
  obj["local_bsz"] = b.local;
  obj["accum_steps"] = b.accum_steps;
}

BatchSetting parse_batch_setting(const Node& n) {
  BatchSetting b;
  if (auto v = n.get("batch_size")) {
    if (!v->is_number() || !global_batch_of(v->as_number())) {
      v->expected("a whole number of samples from 0 to " + std::to_string(kMaxGlobalBatch));
    }
    b.global = *global_batch_of(v->as_number());
  }
  if (auto v = n.get("local_bsz")) b.local = v->non_negative_int32();
  if (auto v = n.get("accum_steps")) b.accum_steps = static_cast<int>(v->int_in(0, kMaxAccumSteps));
  return b;
}

std::string batch_change(const BatchSetting& a, const BatchSetting& b) {
  std::vector<std::string> why;
  auto differ = [&](const char* name, std::int64_t x, std::int64_t y) {
    if (x != y)
      why.push_back(std::string(name) + " " + std::to_string(x) + " -> " + std::to_string(y));
  };
  differ("batch_size", a.global, b.global);
  differ("local_bsz", a.local, b.local);
  differ("accum_steps", a.accum_steps, b.accum_steps);
  std::string out;
  for (const auto& p : why) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace sia
