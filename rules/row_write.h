// row_write: the K and V cache writes of one position, as one kv_write launch.
//
// Math: k_cache[pos] = k;  v_cache[pos] = v.  One thread per element writes
// the element of both caches. Legal because the two writes touch disjoint
// states and read only this step's K and V; both must have the same
// [n_kv_head, head_dim] shape and cache rows, else the rule declines.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_row_write_rule();

}  // namespace lanec
