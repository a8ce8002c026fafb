#include "lib/common/error.h"

namespace lanec {

void internal_failure(const char* file, int line, const char* condition,
                      const std::string& detail) {
  throw InternalError(std::string("internal error (a lanec bug) at ") + file + ":" +
                      std::to_string(line) + ": " + condition +
                      (detail.empty() ? "" : " — " + detail));
}

}  // namespace lanec
