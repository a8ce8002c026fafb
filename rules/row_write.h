// row_write: the K and V cache writes of one position join the launch that
// produces the K row (the RoPE launch), or, where that cannot be, become one
// kv_write launch of their own.
//
// Math: k_cache[pos] = k;  v_cache[pos] = v.  Joined: the RoPE launch stores
// each K head it has just rotated (and head-normed) at row pos of the K
// cache, and extra warps copy the V heads into the V cache; no kv_write
// launch remains. Otherwise one thread per element writes the element of
// both caches. Legal because the two writes touch disjoint states and read
// only this step's K and V; both must have the same [n_kv_head, head_dim]
// shape and cache rows, else the rule declines.
//
// The join needs the K row to be a rope op's output read straight by the K
// write, written at the rope's position, from a rope node that stores no
// cache rows yet, and a legal merge position; otherwise the rule falls back
// to the kv_write launch (same firing). After the join, the planner lets the
// launch skip writing the rotated K back when it proves no one else reads it
// (docs/rules.md).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_row_write_rule();

}  // namespace lanec
