#include <catch2/catch.hpp>

#include "policy/baselines.hpp"

TEST_CASE("themis: the policy exists", "[themis]") { CHECK(true); }
