// Catch2's main lives alone in this unit so that test files compile fast.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
