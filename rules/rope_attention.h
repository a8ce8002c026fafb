// rope_attention: the RoPE launch in front of an attention (the query's and
// this step's key's head norm and rotation, and the K and V cache rows) done
// by the attention launch itself.
//
// Math: q' = rope(norm(q)), k' = rope(norm(k)) at pos;  k_cache[pos] = k',
// v_cache[pos] = v;  out = attention(q', k_cache, v_cache). Each attention
// block holds the query heads it serves in registers anyway: it reads them
// before their norm and rotation and forms them there (one shuffle reduction
// a head, one shuffle for a NeoX partner), and the blocks whose split holds
// key pos form that key's row the same way, score it from registers, and
// one of them stores both rows at pos for the steps after. Legal because the
// rotated query and key are read by no one else (the attention keeps the
// query in registers; the key goes only to its cache), the rows land at the
// attention's own position, and no block of the launch reads row pos from
// the cache. Declines when the rope node does not also store this
// attention's K and V rows (row_write or rope_parts held or declined), when
// another launch reads the rotated query or key, or when a lane cannot
// rotate its run of a head in registers (kernels/limits.h).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_rope_attention_rule();

}  // namespace lanec
