// os/random_text.hpp: the length asked, only [a-z0-9], and draws that differ.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "os/random_text.hpp"

using sia::os::random_text;

TEST_CASE("random text: the length asked, of [a-z0-9], never the same twice in practice", "[os]") {
  CHECK(random_text(0).empty());
  std::set<std::string> seen;
  std::set<char> chars;
  for (int i = 0; i < 200; ++i) {
    const std::string t = random_text(16);
    REQUIRE(t.size() == 16);
    CHECK(t.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos);
    seen.insert(t);
    chars.insert(t.begin(), t.end());
  }
  CHECK(seen.size() == 200);                // 2^82 possibilities each
  CHECK(chars.size() > 30);                 // 3200 draws of 36 characters: all but a few appear
  CHECK(random_text(5000).size() == 5000);  // more than one getrandom call may give
}
