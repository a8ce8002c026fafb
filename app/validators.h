// Command-line value checks with messages in the project's words (CLI11's
// own number checks print their range as doubles).
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

namespace lanec::app {

// A whole number, written in decimal digits with an optional leading '-',
// from `min` to the largest T. The value is written back in plain decimal,
// because CLI11 then reads it in base 0 ("010" would be octal 8). CLI11
// prefixes the option's name to the message. Attach it with transform(), which
// keeps the rewritten value (check() works on a copy).
template <typename T>
CLI::Validator at_least(long long min) {
  static_assert(std::is_integral_v<T>, "at_least checks integer options");
  const unsigned long long max = std::numeric_limits<T>::max();
  const std::string low = "expected a whole number of at least " + std::to_string(min) + ", got '";
  const std::string high = "expected a whole number of at most " + std::to_string(max) + ", got '";
  return CLI::Validator(
      [min, max, low, high](std::string& value) -> std::string {
        const bool negative = !value.empty() && value[0] == '-';
        const size_t digits = negative ? 1 : 0;
        if (value.size() == digits || value.find_first_not_of("0123456789", digits) != std::string::npos)
          return low + value + "'";
        errno = 0;
        if (negative) {
          const long long n = std::strtoll(value.c_str(), nullptr, 10);
          if (errno == ERANGE || n < min) return low + value + "'";
          value = std::to_string(n);
          return {};
        }
        const unsigned long long n = std::strtoull(value.c_str(), nullptr, 10);
        if (errno == ERANGE || n > max) return high + value + "'";
        if (min > 0 && n < static_cast<unsigned long long>(min)) return low + value + "'";
        value = std::to_string(n);
        return {};
      },
      "");  // the option's help text says what the number means
}

}  // namespace lanec::app
