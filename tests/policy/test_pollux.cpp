#include <catch2/catch.hpp>

#include "policy/baselines.hpp"

TEST_CASE("pollux: the policy exists", "[pollux]") { CHECK(true); }
