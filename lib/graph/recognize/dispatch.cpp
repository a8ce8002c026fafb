// recognize_model: general.architecture -> the architecture's recognizer.
#include <functional>
#include <utility>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/decoder_parts.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"

namespace lanec {
namespace {

using Recognizer = std::function<Graph(const GgufFile&, const RecognizeOptions&)>;

const std::vector<std::pair<std::string, Recognizer>>& recognizers() {
  static const std::vector<std::pair<std::string, Recognizer>> table = {
      {"llama", recognize_llama},
      {"qwen2", recognize_qwen2},
      {"qwen3", recognize_qwen3},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& recognized_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : recognizers()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

Graph recognize_model(const GgufFile& gguf, const RecognizeOptions& options) {
  const std::string arch = gguf.get_string("general.architecture");
  for (const auto& [name, recognize] : recognizers())
    if (name == arch) return recognize(gguf, options);
  std::string known;
  for (const std::string& name : recognized_architectures())
    known += (known.empty() ? "" : ", ") + name;
  throw Error(gguf.path() + ": general.architecture: unknown architecture \"" + arch +
              "\" (recognized: " + known + ")");
}

Graph load_step_graph(const GgufFile& gguf, const std::string& graph_file,
                      const RecognizeOptions& options) {
  if (graph_file.empty()) return recognize_model(gguf, options);
  Graph graph = read_graph_file(graph_file);
  try {
    verify_graph(graph);
  } catch (const Error& e) {
    throw Error(graph_file + ": " + e.what());
  }
  return graph;
}

}  // namespace lanec
