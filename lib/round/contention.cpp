#include "round/contention.hpp"

namespace sia {

void Contention::count(int units) {
  contention_sum += units;
  rounds += 1;
}

double Contention::n_avg() const {
  return rounds > 0 ? contention_sum / static_cast<double>(rounds) : 0;
}

double Contention::n_avg_with(int units) const {
  return (contention_sum + units) / static_cast<double>(rounds + 1);
}

}  // namespace sia
