// join_in_place: a concat along the last dim of vectors becomes one buffer
// whose parts the producers write in place: no copy launch runs.
//
// Math: y = [a | b | ...];  a, b, ... are views of y at their offsets.
// Legal when each part is an activation written by exactly one launch that
// owns its output (not already a view, not rotated in place) and appears once
// in the concat, and the concat is of vectors (contiguous parts).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_join_in_place_rule();

}  // namespace lanec
