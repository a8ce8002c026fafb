// `lanec ref --knobs`: the planned schedule on the CPU schedule executor,
// end to end through the binary. With dequant numerics and an f32 cache it
// agrees with the unfused reference up to summation order (1e-4 of the row's
// largest logit); with int8 activations it differs from the f32 reference
// but equals, bit for bit, a CpuScheduleExecutor run in this process on the
// same plan; the thread count changes nothing; bad knob files and unknown
// held rules are errors that name the cause.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/cpu_schedule.h"
#include "lib/plan/planner.h"
#include "lib/ref/generate.h"
#include "lib/ref/weights.h"
#include "lib/synth/synth.h"
#include "tests/support/run_lanec.h"

namespace lanec {
namespace {

using test::run_lanec;

const char* kChip = "chip: { name: h200, arch: sm_90, sms: 132, smem_kib_per_block: 227 }\n";
const std::string kPrompt = "3 17 300 42 5 99 250 7";

std::string write_knobs(const std::string& path, const std::string& cache, const std::string& activations) {
  std::ofstream out(path);
  out << kChip << "cache_precision: " << cache << "\nrecurrent_state: f32\nactivations: " << activations
      << "\n";
  return path;
}

std::string write_model(const std::string& preset, GgmlType type, const std::string& path,
                        uint32_t vocab = 0) {
  SynthOptions options;
  options.shape = find_preset(preset);
  if (vocab) options.shape.n_vocab = vocab;
  options.type = type;
  options.seed = 21;
  build_synthetic_model(options).write(path, 1);
  return path;
}

// A .npy written by NpyF32Writer: rows of `cols` floats after the header.
std::vector<std::vector<float>> read_npy_rows(const std::string& path, size_t cols) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  const std::string bytes = s.str();
  REQUIRE(bytes.size() >= 10);
  const size_t header = 10 + (static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
  REQUIRE((bytes.size() - header) % (cols * sizeof(float)) == 0);
  std::vector<std::vector<float>> rows((bytes.size() - header) / (cols * sizeof(float)), std::vector<float>(cols));
  for (size_t r = 0; r < rows.size(); ++r)
    std::memcpy(rows[r].data(), bytes.data() + header + r * cols * sizeof(float), cols * sizeof(float));
  return rows;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// max over rows of max|a - b| / max|b|.
double worst_relative(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (size_t r = 0; r < a.size(); ++r) {
    double scale = 0.0, diff = 0.0;
    for (size_t i = 0; i < b[r].size(); ++i) {
      scale = std::max(scale, static_cast<double>(std::fabs(b[r][i])));
      diff = std::max(diff, std::fabs(static_cast<double>(a[r][i]) - b[r][i]));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

std::vector<std::vector<float>> ref_logits(const std::string& model, const std::string& extra,
                                           const std::string& npy, size_t vocab) {
  const test::RunResult r = run_lanec("ref " + model + " --tokens \"" + kPrompt + "\" -n 4 --logits " + npy +
                                      " " + extra);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_npy_rows(npy, vocab);
}

}  // namespace

TEST_CASE("ref --knobs with dequant numerics and an f32 cache equals plain ref within 1e-4", "[ref-knobs]") {
  const std::string knobs = write_knobs("ref_knobs_exact.yaml", "f32", "dequant");
  for (const std::string preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    INFO(preset);
    const std::string model = write_model(preset, GgmlType::F32, "ref_knobs_" + preset + ".gguf");
    const auto plain = ref_logits(model, "", "ref_knobs_plain.npy", 512);
    const auto planned = ref_logits(model, "--knobs " + knobs, "ref_knobs_planned.npy", 512);
    REQUIRE(planned.size() == 8 + 4 - 1);
    CHECK(worst_relative(planned, plain) <= 1e-4);
    // Held rules change the plan, not the numerics.
    const auto held = ref_logits(model, "--knobs " + knobs + " --hold add_norm", "ref_knobs_held.npy", 512);
    CHECK(worst_relative(held, plain) <= 1e-4);
    std::remove(model.c_str());
  }
  for (const char* f : {"ref_knobs_exact.yaml", "ref_knobs_plain.npy", "ref_knobs_planned.npy", "ref_knobs_held.npy"})
    std::remove(f);
}

TEST_CASE("ref --knobs with int8 activations is the schedule executor's run, not the f32 reference", "[ref-knobs]") {
  const std::string knobs = write_knobs("ref_knobs_int8.yaml", "f16", "int8");
  const std::string model = write_model("qwen3-tiny", GgmlType::Q8_0, "ref_knobs_q8.gguf");
  const auto plain = ref_logits(model, "", "ref_knobs_plain.npy", 512);
  const auto planned = ref_logits(model, "--knobs " + knobs, "ref_knobs_planned.npy", 512);
  // int8 activations round every GEMV input: the logits move.
  CHECK(worst_relative(planned, plain) > 1e-4);

  // The same plan run here, on the same tokens: bit-identical rows.
  GgufFile gguf = GgufFile::open(model);
  RecognizeOptions recognize;
  recognize.max_ctx = 8 + 4 - 1;
  const PlanResult plan = plan_graph(load_step_graph(gguf, "", recognize), load_knobs(knobs), {});
  WeightStore weights(gguf, 1);
  CpuScheduleExecutor executor(plan.schedule, weights, 1);
  std::vector<std::vector<float>> direct;
  generate_greedy(step_functions_of(executor), {3, 17, 300, 42, 5, 99, 250, 7}, 4, 0,
                  [&](int64_t, int32_t, const std::vector<float>& logits) { direct.push_back(logits); });
  REQUIRE(direct.size() == planned.size());
  for (size_t r = 0; r < direct.size(); ++r) {
    INFO("row " << r);
    CHECK(direct[r] == planned[r]);
  }
  for (const std::string& f : {model, knobs, std::string("ref_knobs_plain.npy"), std::string("ref_knobs_planned.npy")})
    std::remove(f.c_str());
}

TEST_CASE("ref --knobs logits do not depend on the thread count", "[ref-knobs]") {
  // A vocabulary of 8192 rows makes the head GEMV big enough to be split
  // over threads (small GEMVs run on the calling thread).
  const std::string knobs = write_knobs("ref_knobs_threads.yaml", "f16", "int8");
  const std::string model = write_model("qwen3-tiny", GgmlType::Q8_0, "ref_knobs_threads.gguf", 8192);
  const std::string base = "ref " + model + " --knobs " + knobs + " --tokens \"" + kPrompt + "\" -n 4 --logits ";
  std::string first;
  for (const char* threads : {"1", "2", "5"}) {
    INFO("-j " << threads);
    const std::string npy = std::string("ref_knobs_j") + threads + ".npy";
    const test::RunResult r = run_lanec(base + npy + " -j " + threads);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string bytes = read_bytes(npy);
    REQUIRE(bytes.size() > 8192 * 4 * 11);
    if (first.empty()) first = bytes;
    CHECK(bytes == first);
    std::remove(npy.c_str());
  }
  std::remove(model.c_str());
  std::remove(knobs.c_str());
}

TEST_CASE("ref --knobs rejects bad knob files and unknown held rules", "[ref-knobs]") {
  const std::string model = write_model("qwen3-tiny", GgmlType::F32, "ref_knobs_err.gguf");
  const std::string run = "ref " + model + " --tokens \"1 2\" -n 2 ";

  {
    write_knobs("ref_knobs_bad.yaml", "f16", "int4");
    const test::RunResult r = run_lanec(run + "--knobs ref_knobs_bad.yaml");
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("ref_knobs_bad.yaml") != std::string::npos);
    CHECK(r.output.find("int4") != std::string::npos);
    // The same message `lanec plan` gives.
    const test::RunResult plan = run_lanec("plan " + model + " --knobs ref_knobs_bad.yaml");
    CHECK(plan.exit_code != 0);
    const std::string message = plan.output.substr(0, plan.output.find('\n'));
    CHECK(r.output.find(message) != std::string::npos);
  }
  const std::string knobs = write_knobs("ref_knobs_good.yaml", "f16", "int8");
  {
    const test::RunResult r = run_lanec(run + "--knobs " + knobs + " --hold add_norm,no_such_rule");
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("unknown rule 'no_such_rule' in --hold") != std::string::npos);
  }
  {
    const test::RunResult r = run_lanec(run + "--hold add_norm");
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("--hold needs --knobs") != std::string::npos);
  }
  {
    const test::RunResult r = run_lanec(run + "--knobs no_such_file.yaml");
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("no_such_file.yaml") != std::string::npos);
  }
  for (const char* f : {"ref_knobs_err.gguf", "ref_knobs_bad.yaml", "ref_knobs_good.yaml"}) std::remove(f);
}

}  // namespace lanec

namespace lanec {
namespace {

TEST_CASE("ref --graph --knobs plans the graph file as ref --knobs plans the model", "[ref-knobs]") {
  const std::string knobs = write_knobs("ref_knobs_graph.yaml", "f16", "two-pass-int8");
  const std::string model = write_model("qwen3-tiny", GgmlType::Q8_0, "ref_knobs_graph.gguf");
  const test::RunResult graph = run_lanec("graph " + model + " -o ref_knobs_graph.txt");
  INFO(graph.output);
  REQUIRE(graph.exit_code == 0);
  const auto from_model = ref_logits(model, "--knobs " + knobs, "ref_knobs_from_model.npy", 512);
  const auto from_graph =
      ref_logits(model, "--graph ref_knobs_graph.txt --knobs " + knobs, "ref_knobs_from_graph.npy", 512);
  CHECK(read_bytes("ref_knobs_from_model.npy") == read_bytes("ref_knobs_from_graph.npy"));
  CHECK(from_model.size() == from_graph.size());
  for (const char* f : {"ref_knobs_graph.yaml", "ref_knobs_graph.gguf", "ref_knobs_graph.txt",
                        "ref_knobs_from_model.npy", "ref_knobs_from_graph.npy"})
    std::remove(f);
}

}  // namespace
}  // namespace lanec
