// The emitter: a planned schedule -> one self-contained CUDA program (.cu text).
//
// The text is a function of (schedule, graph, model identity, options) only:
// no timestamps, host names or absolute paths, names from the graph, sorted
// iteration, so golden files pin it byte for byte. The emitter makes no
// decisions: every template argument, launch shape and pointer comes from the
// schedule; kernel logic lives in kernels/*.cuh and the host runtime in
// kernels/runtime/ (docs/emitted-program.md describes the emitted file).
//
// Errors: a launch the kernel library cannot take (a GEMV over a weight format
// without a GEMV kernel, a head size the attention kernel does not support,
// a cache write with no K and no V) is a lanec::Error naming the launch and why.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/graph/graph.h"
#include "lib/plan/schedule.h"

namespace lanec {

class GgufFile;

// What the program checks the GGUF named on its command line against, beyond
// the planned weight names, shapes and formats: the model-level metadata
// (general.architecture and every "<arch>.*" key, as gguf_value_summary
// text) whose values the plan baked in, and a fingerprint of the metadata and
// tensor table for the header.
struct ModelIdentity {
  std::string fingerprint;  // 16 hex digits, FNV-1a 64 over keys, values, tensor infos
  std::vector<std::pair<std::string, std::string>> checked_metadata;  // key order of the file
};
ModelIdentity model_identity(const GgufFile& gguf);

struct EmitOptions {
  std::string knob_file;  // as the user named it; only its file name goes into the text
  std::string output_name = "model";  // the program's file name in the header's build command
};

// The program text. `graph` is the recognized (unfused) graph whose op indices
// the schedule's launches cite.
std::string emit_program(const Schedule& schedule, const Graph& graph, const ModelIdentity& identity,
                         const EmitOptions& options);

// The nvcc command that builds the emitted `cu_file` into `output`, with
// `src_dir` the lanec source tree (kernels/, lib/); `arch` like "sm_90".
std::string nvcc_build_command(const std::string& src_dir, const std::string& arch,
                               const std::string& cu_file, const std::string& output);

// The lanec sources an emitted program links (relative to the source tree).
const std::vector<std::string>& runtime_sources();

}  // namespace lanec
