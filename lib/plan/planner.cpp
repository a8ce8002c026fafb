// The planner pipeline (planner.h).
#include "lib/plan/planner.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"
#include "lib/plan/fused_graph.h"
#include "lib/plan/link.h"
#include "lib/plan/rewrite.h"
#include "lib/plan/rule_tally.h"
#include "lib/plan/size.h"
#include "lib/plan/triggers.h"
#include "lib/plan/verify_schedule.h"
#include "rules/registry.h"

namespace lanec {
namespace {

bool held(const PlanOptions& options, const std::string& rule) {
  return std::find(options.held.begin(), options.held.end(), rule) != options.held.end();
}

void check_stage_name(const std::string& stage) {
  if (stage.empty()) return;
  const auto& names = plan_stage_names();
  if (std::find(names.begin(), names.end(), stage) != names.end()) return;
  std::string valid;
  for (const std::string& n : names) valid += (valid.empty() ? "" : ", ") + n;
  throw Error("unknown stage '" + stage + "' in --dump-after; valid stages: " + valid);
}

// Stage `sequences`: with one sequence a step there is nothing to merge; the
// rule waits for batched decode (rules/sequences.h).
std::vector<Launch> merge_sequences(std::vector<Launch> launches) { return launches; }

Census take_census(const Schedule& s, const RuleTally& tally) {
  Census c;
  for (const Launch& l : s.launches) ++c.launches[launch_kind_name(l.kind)];
  c.rules = tally.counts(s.held);
  for (const Buffer& b : s.buffers) c.buffer_bytes[buffer_role_name(b.role)] += b.bytes;
  for (const Launch& l : s.launches) c.weight_bytes_per_step += s.weight_bytes_read(l);
  return c;
}

}  // namespace

const std::vector<std::string>& plan_stage_names() {
  static const std::vector<std::string> names = {"recognize", "rewrite", "link",
                                                 "size",      "sequences", "schedule"};
  return names;
}

PlanResult plan_graph(Graph graph, const Knobs& knobs, const PlanOptions& options) {
  check_stage_name(options.dump_after);
  PlanResult result;
  result.graph = std::move(graph);
  const Graph& g = result.graph;
  auto dump = [&](const char* stage, const std::function<std::string()>& text) {
    if (options.dump_after == stage) result.dump = text();
  };

  // recognize (done by the caller or read from a file): verify what we got.
  verify_graph(g);
  dump("recognize", [&] { return print_graph(g); });

  // rewrite: every graph rule, registry order, verifier after each firing.
  RuleTally tally;
  FusedGraph fused(g);
  verify_fused_graph(fused, "recognize");
  apply_rules(fused, knobs, options.held, tally);
  verify_fused_graph(fused, "rewrite");
  dump("rewrite", [&] { return print_fused_graph(fused); });

  // link: one launch (or view) a node.
  LinkedPlan linked = link_launches(fused, knobs);
  dump("link", [&] { return print_launches(linked.launches); });

  // size: int8 forms, chip parameters, buffers.
  SizeRules size_rules;
  size_rules.rows_a_warp = !held(options, "rows_a_warp");
  size_rules.staged_weights = !held(options, "staged_weights");
  size_rules.row_loop = !held(options, "row_loop");
  size_rules.load_ahead = !held(options, "load_ahead");
  size_rules.gemv_argmax = !held(options, "gemv_argmax");
  SizedPlan sized = size_plan(g, linked, knobs, size_rules, tally);
  dump("size", [&] { return print_launches(sized.launches) + "\n" + print_buffers(sized.buffers); });

  // sequences: merge per-sequence launches.
  Schedule& s = result.schedule;
  s.launches = merge_sequences(std::move(sized.launches));
  s.buffers = std::move(sized.buffers);
  // The GEMV residuals loaded before the wait, then early_trigger: over the final launch order.
  mark_early_residuals(s);
  if (!held(options, "early_trigger")) choose_early_triggers(s, knobs, tally);
  dump("sequences", [&] { return print_launches(s.launches); });

  // schedule: identity, outputs, census.
  s.arch = g.metadata().count("arch") ? std::get<std::string>(g.metadata().at("arch")) : "";
  s.knobs = knobs;
  s.held = options.held;
  for (TensorId t : g.outputs()) s.outputs.push_back(g.tensor(t).name);
  s.firings = tally.firings();
  s.census = take_census(s, tally);
  verify_schedule(s);
  dump("schedule", [&] { return schedule_text(s); });
  return result;
}

PlanResult plan_model(const GgufFile& gguf, const Knobs& knobs, const PlanOptions& options) {
  check_stage_name(options.dump_after);
  RecognizeOptions recognize;
  recognize.max_ctx = options.max_ctx;
  PlanResult result = plan_graph(load_step_graph(gguf, options.graph_file, recognize), knobs, options);
  result.schedule.model_name = gguf.get_string_or("general.name", "");
  return result;
}

std::string census_text(const Schedule& s) {
  std::string out;
  out += "model: " + (s.arch.empty() ? std::string("?") : s.arch);
  if (!s.model_name.empty()) out += " \"" + s.model_name + "\"";
  out += "\nknobs: " + knobs_summary(s.knobs) + "\n";
  std::string held_list;
  for (const std::string& h : s.held) held_list += (held_list.empty() ? "" : ",") + h;
  out += "held: " + (held_list.empty() ? std::string("none") : held_list) + "\n";
  size_t total = s.launches.size();
  out += "launches: " + std::to_string(total) + "\n";
  for (const auto& [kind, count] : s.census.launches)
    out += "  " + kind + std::string(12 - std::min<size_t>(kind.size(), 11), ' ') +
           std::to_string(count) + "\n";
  out += "rules (matched / fired / declined):\n";
  for (const RuleCount& r : s.census.rules) {
    int declined = r.matched - r.fired;
    out += "  " + r.rule + std::string(24 - std::min<size_t>(r.rule.size(), 23), ' ');
    if (r.status != "active") {
      out += r.status + "\n";
      continue;
    }
    out += std::to_string(r.matched) + " / " + std::to_string(r.fired) + " / " +
           std::to_string(declined) + "\n";
    for (const auto& [reason, count] : r.declined)
      out += "    declined " + std::to_string(count) + "x: " + reason + "\n";
  }
  out += "buffers:\n";
  uint64_t total_bytes = 0;
  for (const auto& [role, bytes] : s.census.buffer_bytes) {
    out += "  " + role + std::string(12 - std::min<size_t>(role.size(), 11), ' ') +
           std::to_string(bytes) + " bytes\n";
    total_bytes += bytes;
  }
  out += "  total       " + std::to_string(total_bytes) + " bytes\n";
  out += "weight bytes read per step: " + std::to_string(s.census.weight_bytes_per_step) + "\n";
  return out;
}

std::string census_json(const Schedule& s) {
  nlohmann::ordered_json j;
  j["arch"] = s.arch;
  j["model"] = s.model_name;
  j["knobs"] = knobs_summary(s.knobs);
  j["held"] = s.held;
  nlohmann::ordered_json launches = nlohmann::ordered_json::object();
  for (const auto& [kind, count] : s.census.launches) launches[kind] = count;
  j["launches"] = launches;
  j["launch_count"] = s.launches.size();
  nlohmann::ordered_json rules = nlohmann::ordered_json::array();
  for (const RuleCount& r : s.census.rules) {
    nlohmann::ordered_json e;
    e["rule"] = r.rule;
    e["status"] = r.status;
    e["matched"] = r.matched;
    e["fired"] = r.fired;
    nlohmann::ordered_json d = nlohmann::ordered_json::object();
    for (const auto& [reason, count] : r.declined) d[reason] = count;
    e["declined"] = d;
    rules.push_back(e);
  }
  j["rules"] = rules;
  nlohmann::ordered_json bytes = nlohmann::ordered_json::object();
  for (const auto& [role, b] : s.census.buffer_bytes) bytes[role] = b;
  j["buffer_bytes"] = bytes;
  j["weight_bytes_per_step"] = s.census.weight_bytes_per_step;
  nlohmann::ordered_json firings = nlohmann::ordered_json::array();
  for (const Firing& f : s.firings) firings.push_back({{"rule", f.rule}, {"ops", f.ops}});
  j["firings"] = firings;
  return j.dump(2) + "\n";
}

std::string schedule_text(const Schedule& s) {
  return "launches:\n" + print_launches(s.launches) + "buffers:\n" + print_buffers(s.buffers);
}

}  // namespace lanec
