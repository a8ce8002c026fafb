// slice_read: a contiguous slice (a range of the last dim of a vector) becomes
// a view at an offset: its readers read the range in place, no launch runs.
//
// Math: y = x[offset : offset + width].  Legal when the range is contiguous
// in memory: x has no leading dim other than 1. A slice of the last dim of a
// [rows, cols] tensor is strided and declines (strided_values is the rule for
// values read as strided rows).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_slice_read_rule();

}  // namespace lanec
