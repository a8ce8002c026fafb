// Two kinds of error (see docs/architecture.md):
//  - lanec::Error is a user error: bad input file, bad knob, bad prompt. Its
//    message says what, where, what was expected and what was found. app/
//    catches it once and turns it into a message and a non-zero exit code.
//  - LANEC_ASSERT marks a compiler bug and reports the source file and line.
#pragma once

#include <stdexcept>
#include <string>

namespace lanec {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

[[noreturn]] void internal_failure(const char* file, int line, const char* condition,
                                   const std::string& detail);

}  // namespace lanec

#define LANEC_ASSERT(cond, detail)                                           \
  do {                                                                       \
    if (!(cond)) ::lanec::internal_failure(__FILE__, __LINE__, #cond, detail); \
  } while (0)
