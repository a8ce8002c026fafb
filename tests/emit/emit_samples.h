// Shared by the emitter tests: the tiny samples (lib/synth presets) and knob
// files the golden programs are made from (head size widened to 32), and how
// one is planned and emitted.
#pragma once

#include <string>
#include <vector>

#include "emit/emit_program.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/planner.h"
#include "lib/plan/verify_schedule.h"
#include "lib/synth/synth.h"

namespace emit_test {

inline const std::vector<std::string>& samples() {
  static const std::vector<std::string> s = {"llama-tiny", "qwen2-tiny", "qwen3-tiny"};
  return s;
}
inline const std::vector<std::string>& knob_files() {
  static const std::vector<std::string> k = {"h200", "rtx4090"};
  return k;
}
inline std::string knob_path(const std::string& knobs) {
  return std::string(LANEC_SOURCE_DIR) + "/samples/knobs/" + knobs + ".yaml";
}
inline std::string golden_path(const std::string& sample, const std::string& knobs) {
  return std::string(LANEC_SOURCE_DIR) + "/tests/golden/emit/" + sample + "__" + knobs + ".cu";
}

struct Planned {
  lanec::PlanResult result;
  lanec::ModelIdentity identity;
};

inline Planned plan_sample_with(const std::string& sample, const lanec::Knobs& knobs,
                                const std::vector<std::string>& held = {}, int64_t max_ctx = 0) {
  lanec::SynthOptions synth;
  synth.shape = lanec::find_preset(sample);
  synth.type = lanec::GgmlType::Q8_0;
  const std::vector<uint8_t> bytes = lanec::build_synthetic_model(synth).to_bytes();
  const lanec::GgufFile gguf = lanec::GgufFile::parse(bytes.data(), bytes.size(), sample + ".gguf");
  lanec::PlanOptions options;
  options.held = held;
  options.max_ctx = max_ctx;
  Planned p{lanec::plan_model(gguf, knobs, options), lanec::model_identity(gguf)};
  return p;
}

inline Planned plan_sample(const std::string& sample, const std::string& knobs,
                           const std::vector<std::string>& held = {}) {
  return plan_sample_with(sample, lanec::load_knobs(knob_path(knobs)), held);
}

// The h200 sample knobs with one-word int8 activations (activations: int8,
// the opt-in faster mode; the samples take two-pass-int8).
inline std::string emit_one_word_sample(const std::string& sample) {
  lanec::Knobs knobs = lanec::load_knobs(knob_path("h200"));
  knobs.activations = lanec::ActivationNumerics::int8;
  const Planned p = plan_sample_with(sample, knobs);
  lanec::EmitOptions options;
  options.knob_file = "h200 with activations: int8";
  return lanec::emit_program(p.result.schedule, p.result.graph, p.identity, options);
}

// One layer at a preset's widths (a 512-token vocabulary, a narrow FFN)
// under the h200 knobs.
inline std::string emit_one_layer_sample(const std::string& preset, const std::vector<std::string>& held) {
  lanec::SynthOptions synth;
  synth.shape = lanec::find_preset(preset);
  synth.shape.n_layer = 1;
  synth.shape.n_vocab = 512;
  synth.shape.n_ff = 256;
  synth.type = lanec::GgmlType::Q8_0;
  const std::vector<uint8_t> bytes = lanec::build_synthetic_model(synth).to_bytes();
  const lanec::GgufFile gguf = lanec::GgufFile::parse(bytes.data(), bytes.size(), preset + "-1l.gguf");
  lanec::PlanOptions plan;
  plan.held = held;
  const lanec::PlanResult r = lanec::plan_model(gguf, lanec::load_knobs(knob_path("h200")), plan);
  lanec::EmitOptions options;
  options.knob_file = "samples/knobs/h200.yaml";
  return lanec::emit_program(r.schedule, r.graph, lanec::model_identity(gguf), options);
}

// Qwen3-1.7B's widths with load_ahead held, where staged_weights then fires
// on the output projection (with every rule on, load_ahead takes it).
inline std::string emit_staged_sample(std::vector<std::string> held = {}) {
  held.push_back("load_ahead");
  return emit_one_layer_sample("qwen3-1.7b", held);
}

// Qwen3-0.6B's widths, where load_ahead fires on the Q/K/V GEMV (k 1024:
// two chunks a lane; 4,096 rows, one wave).
inline std::string emit_load_ahead_sample(const std::vector<std::string>& held = {}) {
  return emit_one_layer_sample("qwen3-0.6b", held);
}

// qwen3-tiny under the h200 knobs on a chip of one SM, where the logits
// GEMV's 512 rows are 8 waves of the SM's warps and row_loop fires.
inline Planned plan_one_sm_sample(const std::vector<std::string>& held = {}) {
  lanec::Knobs knobs = lanec::load_knobs(knob_path("h200"));
  knobs.chip.sms = 1;
  return plan_sample_with("qwen3-tiny", knobs, held);
}
inline std::string emit_one_sm(const Planned& p) {
  lanec::EmitOptions options;
  options.knob_file = "h200 on one SM";
  return lanec::emit_program(p.result.schedule, p.result.graph, p.identity, options);
}
inline std::string emit_row_loop_sample(const std::vector<std::string>& held = {}) {
  return emit_one_sm(plan_one_sm_sample(held));
}

// The row-loop sample (qwen3-tiny on one SM, where ffn_fused fires) with
// every ffn launch in another of the kernel's forms (FfnLaunch), verified
// again: the forms the planner does not choose (measured slower).
inline std::string emit_ffn_form_sample(int warps, int min_blocks, int ahead, int split) {
  Planned p = plan_one_sm_sample();
  for (lanec::Launch& l : p.result.schedule.launches) {
    if (auto* f = std::get_if<lanec::FfnLaunch>(&l.params)) {
      f->warps = warps;
      f->min_blocks = min_blocks;
      f->ahead = ahead;
      f->split = split;
    }
  }
  lanec::verify_schedule(p.result.schedule);
  return emit_one_sm(p);
}

inline std::string emit_sample(const std::string& sample, const std::string& knobs) {
  const Planned p = plan_sample(sample, knobs);
  lanec::EmitOptions options;
  options.knob_file = "samples/knobs/" + knobs + ".yaml";
  return lanec::emit_program(p.result.schedule, p.result.graph, p.identity, options);
}

}  // namespace emit_test
