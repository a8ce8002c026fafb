// quantize_prologue: the int8 form of an activation that no launch writes
// (the SwiGLU product, for one) is built by the GEMVs that read it: each
// block quantizes the f32 vector while it stages its input in shared memory
// (kernels/gemv.cuh, Staged), so no quantize launch remains.
//
// Math unchanged: the block applies the quantize kernel's per-32-element
// formula (quantize_block_warp) to the same f32 values, so the GEMV
// multiplies the very words a quantize launch would have written. A launch
// stage rule: the size stage, which decides who writes each int8 form, asks
// choose_quantize_prologue for each GEMV reading a form nothing else writes.
// Declines when the staged vector exceeds kGemvMaxStageBytes of shared memory
// (kernels/limits.h); then a quantize launch writes the form as before.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_quantize_prologue_rule();

// nullopt when a GEMV with k inputs in the given int8 numerics (two words or
// one) can quantize its input in its prologue, else the reason it cannot.
std::optional<std::string> quantize_prologue_declines(int64_t k, bool two_words);

}  // namespace lanec
