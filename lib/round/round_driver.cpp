#include "round/round_driver.hpp"

namespace sia {

void run_round(RoundWorld& world) {
  world.collect();
  world.app_phases();
  const Census census = world.census();
  world.schedule(census);
  world.book_fairness(census);
  world.deliver(census);
  world.close(census);
}

}  // namespace sia
