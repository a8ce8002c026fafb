// `lanec ref` and `lanec graph` end to end on a tiny model written to disk:
// printed ids, the logits file's shape and contents, --graph, and errors.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lib/gguf/gguf_writer.h"
#include "lib/ref/npy.h"
#include "lib/synth/synth.h"

namespace {

struct CommandResult {
  int status;
  std::string output;
};

CommandResult run_lanec(const std::string& args) {
  const std::string command = std::string(LANEC_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  return {pclose(pipe), output};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<int> ids_after(const std::string& output, const std::string& label) {
  const size_t at = output.find(label);
  REQUIRE(at != std::string::npos);
  std::istringstream line(output.substr(at + label.size(), output.find('\n', at) - at - label.size()));
  std::vector<int> ids;
  for (int id; line >> id;) ids.push_back(id);
  return ids;
}

}  // namespace

TEST_CASE("lanec ref prints greedy ids and dumps P + n - 1 logits rows", "[ref]") {
  lanec::SynthOptions options;
  options.shape = lanec::find_preset("qwen2-tiny");
  options.type = lanec::GgmlType::F32;
  const std::string model = "lanec_ref_cmd_test.gguf", npy = "lanec_ref_cmd_test.npy";
  lanec::build_synthetic_model(options).write(model, 1);

  const CommandResult r = run_lanec("ref " + model + " --tokens \"5 6 7\" -n 4 --logits " + npy);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(ids_after(r.output, "prompt:") == std::vector<int>{5, 6, 7});
  const std::vector<int> generated = ids_after(r.output, "generated:");
  REQUIRE(generated.size() == 4);

  const std::string bytes = read_file(npy);
  const std::string header = lanec::npy_header_f32({6, 512});  // 3 + 4 - 1 steps
  REQUIRE(bytes.size() == header.size() + 6 * 512 * sizeof(float));
  CHECK(bytes.substr(0, header.size()) == header);
  for (size_t i = 0; i < 4; ++i) {  // rows 2..5 give the generated ids
    std::vector<float> row(512);
    std::memcpy(row.data(), bytes.data() + header.size() + (2 + i) * 512 * sizeof(float), 512 * sizeof(float));
    CHECK(std::max_element(row.begin(), row.end()) - row.begin() == generated[i]);
  }

  // The same run through the printed graph gives the same ids.
  const std::string graph = "lanec_ref_cmd_test.graph";
  REQUIRE(run_lanec("graph " + model + " --max-ctx 6 -o " + graph).status == 0);
  const CommandResult again = run_lanec("ref " + model + " --graph " + graph + " --tokens \"5 6 7\" -n 4");
  INFO(again.output);
  CHECK(ids_after(again.output, "generated:") == generated);

  const CommandResult bad = run_lanec("ref " + model + " --tokens \"5 x\" -n 2");
  CHECK(bad.status != 0);
  CHECK(bad.output.find("--tokens: expected non-negative token ids separated by spaces or commas, got 'x'") != std::string::npos);
  const CommandResult both = run_lanec("ref " + model + " -n 2");
  CHECK(both.output.find("expected exactly one of -p TEXT or --tokens") != std::string::npos);
  const CommandResult long_run = run_lanec("ref " + model + " --graph " + graph + " --tokens \"1 2 3 4\" -n 4");
  CHECK(long_run.output.find("needs 7 positions, the context holds 6") != std::string::npos);
  for (const std::string& f : {model, npy, graph}) std::remove(f.c_str());
}
