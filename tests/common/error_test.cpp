#include <catch2/catch.hpp>

#include "lib/common/error.h"

TEST_CASE("LANEC_ASSERT reports file and line of a compiler bug") {
  try {
    LANEC_ASSERT(1 + 1 == 3, "arithmetic");
    FAIL("no throw");
  } catch (const lanec::InternalError& e) {
    const std::string message = e.what();
    CHECK(message.find("error_test.cpp:") != std::string::npos);
    CHECK(message.find("1 + 1 == 3") != std::string::npos);
    CHECK(message.find("arithmetic") != std::string::npos);
  }
}
