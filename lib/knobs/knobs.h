// Knob files: the chip and precision choices the planner works under.
//
// A knob file is a YAML mapping with exactly these keys, all required
// (docs/knobs.md is the reference):
//   chip: { name: rtx4090, arch: sm_89, sms: 128, smem_kib_per_block: 99 }
//   cache_precision: f16      # f32 | f16
//   recurrent_state: bf16     # f32 | bf16
//   activations: two-pass-int8 # dequant | int8 | two-pass-int8
// Every mistake (syntax, unknown/missing/duplicate key, wrong type, bad value)
// is a lanec::Error of the form "FILE:LINE:COLUMN: knob 'KEY': what; expected
// ALLOWED, got FOUND" with 1-based line and column. Nothing is defaulted.
#pragma once

#include <string>

namespace lanec {

// Storage of KV caches.
enum class CachePrecision { f32, f16 };
// Storage of recurrent (gated delta-net) states.
enum class StatePrecision { f32, bf16 };
// Numerics of matmuls against quantized weights: dequantize weights and
// multiply in f32; quantize activations to int8 and use integer dot
// products; or the same with the quantization in a pass of its own first.
enum class ActivationNumerics { dequant, int8, two_pass_int8 };

struct Knobs {
  struct Chip {
    std::string name;             // [A-Za-z0-9_.-]+, shows up in emitted headers
    std::string arch;             // sm_NN or sm_NNa (2 or 3 digits)
    int sms = 0;                  // streaming multiprocessors, 1..1024
    int smem_kib_per_block = 0;   // opt-in shared memory per block, KiB, 1..228
    bool operator==(const Chip& other) const;
  } chip;
  CachePrecision cache_precision = CachePrecision::f32;
  StatePrecision recurrent_state = StatePrecision::f32;
  ActivationNumerics activations = ActivationNumerics::dequant;
  std::string source;  // the file (or label) it was read from; not part of equality

  // sm_89 -> 89, sm_90a -> 90.
  int arch_number() const;
  // Equal chip and precisions (ignores `source`).
  bool operator==(const Knobs& other) const;
  bool operator!=(const Knobs& other) const { return !(*this == other); }
};

// The spelling used in knob files ("f16", "bf16", "two-pass-int8", ...).
const char* knob_name(CachePrecision value);
const char* knob_name(StatePrecision value);
const char* knob_name(ActivationNumerics value);

// Reads and validates a knob file; errors name `path`.
Knobs load_knobs(const std::string& path);
// Validates YAML text; errors name `label` in place of a file.
Knobs parse_knobs(const std::string& yaml_text, const std::string& label);

// Canonical knob file text (keys in documented order, no comments);
// parse_knobs(to_yaml(k), ...) == k.
std::string to_yaml(const Knobs& knobs);
// One line for emitted headers and logs, without the source path:
// "chip=rtx4090 arch=sm_89 sms=128 smem_kib_per_block=99 cache_precision=f16
//  recurrent_state=bf16 activations=int8"
std::string knobs_summary(const Knobs& knobs);

}  // namespace lanec
