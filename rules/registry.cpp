// The ordered registry (rules/registry.h): every rule, one line each.
#include "rules/registry.h"

#include <algorithm>

#include "lib/common/error.h"
#include "rules/add_norm.h"
#include "rules/sandwich_norm.h"
#include "rules/gemv_bias.h"
#include "rules/gemv_norm_epilogue.h"
#include "rules/head_norm_rope.h"
#include "rules/slice_read.h"
#include "rules/row_write.h"
#include "rules/qkv_head_epilogue.h"
#include "rules/join_in_place.h"
#include "rules/conv_silu.h"
#include "rules/conv_silu_l2.h"
#include "rules/conv_parts.h"
#include "rules/gates.h"
#include "rules/gate_projections.h"
#include "rules/act_gate.h"
#include "rules/attn_output_gate.h"
#include "rules/glu_pair.h"
#include "rules/shared_expert.h"
#include "rules/moe_rows.h"
#include "rules/moe_deferred_finalize.h"
#include "rules/gather_scale.h"
#include "rules/embed_norm.h"
#include "rules/strided_values.h"
#include "rules/row_loop.h"
#include "rules/load_ahead.h"
#include "rules/early_trigger.h"
#include "rules/gemv_argmax.h"
#include "rules/rows_a_warp.h"
#include "rules/staged_weights.h"
#include "rules/rope_parts.h"
#include "rules/gemv_parts.h"
#include "rules/ffn_fused.h"
#include "rules/sequences.h"

namespace lanec {
namespace {

std::vector<std::unique_ptr<FusionRule>> make_registry() {
  std::vector<std::unique_ptr<FusionRule>> rules;
  rules.push_back(make_sandwich_norm_rule());
  rules.push_back(make_gemv_bias_rule());
  rules.push_back(make_gemv_norm_epilogue_rule());
  rules.push_back(make_add_norm_rule());
  rules.push_back(make_head_norm_rope_rule());
  rules.push_back(make_slice_read_rule());
  rules.push_back(make_row_write_rule());
  rules.push_back(make_qkv_head_epilogue_rule());
  rules.push_back(make_join_in_place_rule());
  rules.push_back(make_conv_silu_rule());
  rules.push_back(make_conv_silu_l2_rule());
  rules.push_back(make_conv_parts_rule());
  rules.push_back(make_gates_rule());
  rules.push_back(make_gate_projections_rule());
  rules.push_back(make_act_gate_rule());
  rules.push_back(make_attn_output_gate_rule());
  rules.push_back(make_glu_pair_rule());
  rules.push_back(make_shared_expert_rule());
  rules.push_back(make_moe_rows_rule());
  rules.push_back(make_moe_deferred_finalize_rule());
  rules.push_back(make_gather_scale_rule());
  rules.push_back(make_embed_norm_rule());
  rules.push_back(make_strided_values_rule());
  rules.push_back(make_rows_a_warp_rule());
  rules.push_back(make_staged_weights_rule());
  rules.push_back(make_row_loop_rule());
  rules.push_back(make_load_ahead_rule());
  rules.push_back(make_gemv_argmax_rule());
  rules.push_back(make_rope_parts_rule());
  rules.push_back(make_gemv_parts_rule());
  rules.push_back(make_ffn_fused_rule());
  rules.push_back(make_early_trigger_rule());
  rules.push_back(make_sequences_rule());
  return rules;
}

}  // namespace

const std::vector<std::unique_ptr<FusionRule>>& rule_registry() {
  static const std::vector<std::unique_ptr<FusionRule>> rules = make_registry();
  return rules;
}

const std::vector<std::string>& rule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& r : rule_registry()) out.push_back(r->name());
    return out;
  }();
  return names;
}

const FusionRule* find_rule(std::string_view name) {
  for (const auto& r : rule_registry())
    if (name == r->name()) return r.get();
  return nullptr;
}

std::vector<std::string> parse_held_rules(const std::string& comma_separated) {
  std::vector<std::string> named;
  size_t start = 0;
  while (start <= comma_separated.size()) {
    size_t end = comma_separated.find(',', start);
    if (end == std::string::npos) end = comma_separated.size();
    std::string name = comma_separated.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) {
      if (!find_rule(name)) {
        std::string valid;
        for (const std::string& n : rule_names()) valid += (valid.empty() ? "" : ", ") + n;
        throw Error("unknown rule '" + name + "' in --hold; valid rules: " + valid);
      }
      named.push_back(name);
    }
    start = end + 1;
  }
  std::vector<std::string> held;
  for (const std::string& n : rule_names())
    if (std::find(named.begin(), named.end(), n) != named.end()) held.push_back(n);
  return held;
}

}  // namespace lanec
