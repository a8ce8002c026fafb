// Command-line value checks with messages in the project's words (CLI11's
// own number checks print their range as doubles).
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace lanec::app {

// A whole number of at least `min` (unsigned ones up to 2^64 - 1 pass where
// min <= 0, so that a 64-bit seed fits; a sign never wraps around); CLI11
// prefixes the option's name.
inline CLI::Validator at_least(long long min) {
  const std::string bound = std::to_string(min);
  return CLI::Validator(
      [min, bound](std::string& value) -> std::string {
        const std::string error = "expected a whole number of at least " + bound + ", got '" + value + "'";
        if (value.empty()) return error;
        errno = 0;
        char* end = nullptr;
        if (value[0] == '-') {
          const long long n = std::strtoll(value.c_str(), &end, 10);
          return *end != '\0' || errno == ERANGE || n < min ? error : std::string();
        }
        const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
        const bool fits = min <= 0 || n >= static_cast<unsigned long long>(min);
        return value[0] == '+' || *end != '\0' || errno == ERANGE || !fits ? error : std::string();
      },
      "INT>=" + bound);
}

}  // namespace lanec::app
