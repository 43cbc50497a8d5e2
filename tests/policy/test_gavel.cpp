#include <catch2/catch.hpp>

#include "policy/baselines.hpp"

TEST_CASE("gavel: the policy exists", "[gavel]") { CHECK(true); }
