#include <catch2/catch.hpp>

#include "core/crc32.hpp"

TEST_CASE("crc32 is the IEEE one", "[core][crc32]") {
  CHECK(sia::crc32("123456789") == 0xCBF43926u);
  CHECK(sia::crc32("") == 0u);
  // Continuing from an earlier value is computing over the concatenation.
  CHECK(sia::crc32("6789", sia::crc32("12345")) == 0xCBF43926u);
}
