// The planner: one pipeline from a model (or a step-graph file) and a knob
// file to an emit-ready schedule. plan_graph lists the stages in order:
//
//   recognize  GGUF -> step graph (or the graph read from --graph)   verify
//   rewrite    fusion rules, registry order, over the fused graph    verify
//   link       fused nodes -> launches of kernel families (or views)
//   size       int8 forms, chip parameters, buffers
//   sequences  merge per-sequence launches (rule `sequences`)
//   schedule   census, weight bytes per step: the emit-ready schedule
//
// Each stage can be dumped as text (--dump-after STAGE). Planning reads
// shapes, formats and metadata only, never weight data. The result is a
// function of (graph, knobs, held rules): byte-identical across runs.
#pragma once

#include <string>
#include <vector>

#include "lib/graph/graph.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/schedule.h"

namespace lanec {

class GgufFile;

// Stage names in pipeline order.
const std::vector<std::string>& plan_stage_names();

struct PlanOptions {
  std::vector<std::string> held;  // rule names (validated; see parse_held_rules)
  std::string dump_after;         // a stage name, or "" for none
  int64_t max_ctx = 0;            // recognize: cap the KV cache rows (0 = the model's)
  std::string graph_file;         // plan_model: plan this step-graph text file instead of recognizing
};

struct PlanResult {
  Graph graph;        // the recognized (unfused) step graph
  Schedule schedule;
  std::string dump;   // the text of the stage named by dump_after
};

// From a step graph (already verified or not: the verifier runs first).
PlanResult plan_graph(Graph graph, const Knobs& knobs, const PlanOptions& options);
// From a GGUF: its step graph as load_step_graph gives it (recognized, or
// options.graph_file verified), then plan_graph's stages; the schedule takes
// the GGUF's general.name.
PlanResult plan_model(const GgufFile& gguf, const Knobs& knobs, const PlanOptions& options);

// The census as text (lanec plan's summary) and as JSON.
std::string census_text(const Schedule& schedule);
std::string census_json(const Schedule& schedule);
// The whole schedule as text (launches then buffers).
std::string schedule_text(const Schedule& schedule);

}  // namespace lanec
