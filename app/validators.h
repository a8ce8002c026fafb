// Command-line value checks with messages in the project's words (CLI11's
// own number checks print their range as doubles).
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace lanec::app {

// A whole number of at least `min`; CLI11 prefixes the option's name.
inline CLI::Validator at_least(long long min) {
  const std::string bound = std::to_string(min);
  return CLI::Validator(
      [min, bound](std::string& value) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long n = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || errno == ERANGE || n < min)
          return "expected a whole number of at least " + bound + ", got '" + value + "'";
        return {};
      },
      "INT>=" + bound);
}

}  // namespace lanec::app
