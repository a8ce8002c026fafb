// Every golden program compiles with nvcc for sm_80 and sm_90 without a
// warning, and one links into a program with the runtime sources. Hidden from
// the default run (minutes of nvcc on 2 cores); CTest runs it as its own test:
//   ./build/tests/lanec_tests "[emit-nvcc]"
// nvcc comes from $NVCC, else PATH, else /usr/local/cuda/bin/nvcc. No GPU needed.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "emit/emit_program.h"
#include "tests/emit/emit_samples.h"
#include "tests/support/golden.h"

namespace {

std::string find_nvcc() {
  if (const char* env = std::getenv("NVCC")) return env;
  if (std::system("command -v nvcc >/dev/null 2>&1") == 0) return "nvcc";
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
  return "";
}

struct Run {
  int status;
  std::string output;  // stdout + stderr
};

Run run(const std::string& command, const std::string& log) {
  const int status = std::system((command + " >" + log + " 2>&1").c_str());
  return {status, lanec::test::read_text(log)};
}

std::string scratch_dir() {
  char tmpl[] = "/tmp/lanec_emit_nvcc_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  REQUIRE(dir != nullptr);
  return dir;
}

// nvcc's -c of one program for sm_80 and sm_90, warnings as errors.
Run compile_both_archs(const std::string& nvcc, const std::string& cu, const std::string& object,
                       const std::string& dir) {
  return run(nvcc + " -std=c++17 -O3 -c --Werror all-warnings -Xcompiler -Wall,-Wextra"
                    " -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -I" +
                 std::string(LANEC_SOURCE_DIR) + " -x cu " + cu + " -o " + object,
             dir + "/log.txt");
}

// Writes `code` as NAME.cu in a fresh scratch folder and checks that it
// compiles for both archs without a warning.
void check_compiles(const std::string& name, const std::string& code) {
  const std::string nvcc = find_nvcc();
  REQUIRE_FALSE(nvcc.empty());
  const std::string dir = scratch_dir();
  const std::string cu = dir + "/" + name + ".cu";
  std::ofstream(cu) << code;
  const Run r = compile_both_archs(nvcc, cu, dir + "/" + name + ".o", dir);
  INFO(r.output.substr(0, 4000));
  CHECK(r.status == 0);
  CHECK(r.output.empty());
}


// The sm_90 PTX of these kernel instantiations (each a `(void*)kernel<...>`
// entry of one array in a fresh translation unit), built with `flags`.
std::string kernels_ptx(const std::vector<std::string>& kernels, const std::string& flags = "") {
  const std::string nvcc = find_nvcc();
  REQUIRE_FALSE(nvcc.empty());
  const std::string dir = scratch_dir();
  std::ofstream cu(dir + "/kernels.cu");
  cu << "#include \"kernels/lanec_kernels.cuh\"\nusing namespace lanec::kernels;\nvoid* kernels[] = {\n";
  for (const std::string& k : kernels) cu << "  (void*)" << k << ",\n";
  cu << "};\n";
  cu.close();
  const Run r = run(nvcc + " -std=c++17 -O3 -arch=sm_90 --ptx " + flags + " -I" + std::string(LANEC_SOURCE_DIR) + " " + dir +
                        "/kernels.cu -o " + dir + "/kernels.ptx",
                    dir + "/log.txt");
  INFO(r.output.substr(0, 4000));
  REQUIRE(r.status == 0);
  return lanec::test::read_text(dir + "/kernels.ptx");
}

}  // namespace

TEST_CASE("golden programs compile with nvcc for sm_80 and sm_90, warning-free", "[.][emit-nvcc]") {
  const std::string nvcc = find_nvcc();
  REQUIRE_FALSE(nvcc.empty());
  const std::string dir = scratch_dir();
  for (const std::string& sample : emit_test::samples()) {
    for (const std::string& knobs : emit_test::knob_files()) {
      const std::string golden = emit_test::golden_path(sample, knobs);
      INFO(golden);
      REQUIRE(std::ifstream(golden).good());
      const Run r = compile_both_archs(nvcc, golden, dir + "/" + sample + "__" + knobs + ".o", dir);
      INFO(r.output.substr(0, 4000));
      CHECK(r.status == 0);
      CHECK(r.output.empty());
    }
  }
}

TEST_CASE("a program with a staged GEMV compiles with nvcc for sm_80 and sm_90, warning-free", "[.][emit-nvcc]") {
  const std::string code = emit_test::emit_staged_sample();
  REQUIRE(code.find("launch_gemv_staged<") != std::string::npos);
  check_compiles("qwen3-1.7b-1l__staged", code);
}

TEST_CASE("a program with a row-loop GEMV compiles with nvcc for sm_80 and sm_90, warning-free", "[.][emit-nvcc]") {
  const std::string code = emit_test::emit_row_loop_sample();
  REQUIRE(code.find("launch_gemv_row_loop<") != std::string::npos);
  check_compiles("qwen3-tiny__row_loop", code);
}

TEST_CASE("a program with an ahead GEMV compiles with nvcc for sm_80 and sm_90, warning-free", "[.][emit-nvcc]") {
  const std::string code = emit_test::emit_load_ahead_sample();
  REQUIRE(code.find(", false, true>") != std::string::npos);
  check_compiles("qwen3-0.6b-1l__load_ahead", code);
}

TEST_CASE("a program with a cache-less early rope compiles with nvcc for sm_80 and sm_90, warning-free",
          "[.][emit-nvcc]") {
  const std::string code = emit_test::emit_load_ahead_sample({"row_write"});
  REQUIRE(code.find("launch_rope<RopeMode::neox, CachePrecision::f32, true>") != std::string::npos);
  check_compiles("qwen3-0.6b-1l__early_rope_no_rows", code);
}

TEST_CASE("a program with the ffn launch's other forms compiles with nvcc for sm_80 and sm_90, warning-free",
          "[.][emit-nvcc]") {
  const std::string code = emit_test::emit_ffn_form_sample(8, 2, 2, 2);
  REQUIRE(code.find("launch_ffn<2, 8, 2, true, 2, 2>") != std::string::npos);
  check_compiles("qwen3-tiny__ffn_forms", code);
}

TEST_CASE("a one-word int8 program compiles with nvcc for sm_80 and sm_90, warning-free", "[.][emit-nvcc]") {
  check_compiles("qwen3-tiny__one_word", emit_test::emit_one_word_sample("qwen3-tiny"));
}

TEST_CASE("a golden program compiles with the chain stamps of --profile, warning-free", "[.][emit-nvcc]") {
  // -DLANEC_CHAIN_STAMPS (bench/chain_profile.sh) adds the stamps to every
  // kernel's wait and the in-graph table to --profile; off by default, so
  // only this build keeps that code compiling.
  const std::string nvcc = find_nvcc();
  REQUIRE_FALSE(nvcc.empty());
  const std::string dir = scratch_dir();
  const std::string golden = emit_test::golden_path("qwen3-tiny", "h200");
  const Run r = run(nvcc + " -std=c++17 -O3 -c -DLANEC_CHAIN_STAMPS --Werror all-warnings -Xcompiler -Wall,-Wextra"
                           " -arch=sm_90 -I" + std::string(LANEC_SOURCE_DIR) + " -x cu " + golden + " -o " + dir +
                        "/chain.o",
                    dir + "/log.txt");
  INFO(r.output.substr(0, 4000));
  CHECK(r.status == 0);
  CHECK(r.output.empty());
}

TEST_CASE("a golden program links with the runtime sources", "[.][emit-nvcc]") {
  const std::string nvcc = find_nvcc();
  REQUIRE_FALSE(nvcc.empty());
  const std::string dir = scratch_dir();
  const std::string golden = emit_test::golden_path("qwen3-tiny", "h200");
  std::string command = lanec::nvcc_build_command(LANEC_SOURCE_DIR, "sm_90", golden, dir + "/model");
  command.replace(0, 4, nvcc);  // "nvcc" -> the nvcc found
  const Run r = run(command, dir + "/log.txt");
  INFO(command);
  INFO(r.output.substr(0, 4000));
  REQUIRE(r.status == 0);
  // The program runs far enough to parse its flags without a GPU.
  const Run help = run(dir + "/model --help", dir + "/help.txt");
  CHECK(help.status == 0);
  CHECK(help.output.find("--prompt-tokens") != std::string::npos);
  const Run bad = run(dir + "/model", dir + "/bad.txt");
  CHECK(WEXITSTATUS(bad.status) == 2);
  CHECK(bad.output.find("no model file given") != std::string::npos);
}

TEST_CASE("the device benchmarks compile with nvcc for sm_90, warning-free", "[.][emit-nvcc]") {
  const std::string nvcc = find_nvcc();
  REQUIRE_FALSE(nvcc.empty());
  const std::string dir = scratch_dir();
  for (const char* bench : {"copy_bandwidth", "launch_floor", "norm_fold", "persistent_step", "gemv_bulk", "gemv_stream",
                            "attention_occupancy", "attention_splits", "qkv_rope_fold", "ffn_fold"}) {
    INFO(bench);
    const Run r = run(nvcc + " -std=c++17 -O2 -arch=sm_90 --Werror all-warnings -Xcompiler -Wall,-Wextra " +
                          std::string(LANEC_SOURCE_DIR) + "/bench/" + bench + ".cu -o " + dir + "/" + bench,
                      dir + "/log.txt");
    INFO(r.output.substr(0, 4000));
    CHECK(r.status == 0);
    CHECK(r.output.empty());
  }
}

namespace {

// The PTX of the entry whose mangled name contains every one of `parts`.
std::string ptx_entry(const std::string& ptx, std::initializer_list<const char*> parts) {
  size_t at = 0;
  while ((at = ptx.find(".entry ", at)) != std::string::npos) {
    const size_t line_end = ptx.find('\n', at);
    const std::string name = ptx.substr(at, line_end - at);
    const size_t next = ptx.find(".entry ", line_end);
    bool all = true;
    for (const char* p : parts) all = all && name.find(p) != std::string::npos;
    if (all) return ptx.substr(at, next == std::string::npos ? std::string::npos : next - at);
    at = line_end;
  }
  return "";
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("the chain's kernels: no IEEE divide but the quantizers' pair, no integer division after the GEMV's wait", "[.][emit-nvcc]") {
  // An f32 divide is a reciprocal, refinements and a slow-path check: on a
  // GEMV trip or after a quantizer's block max it cost 1.6-2.8 % a token,
  // in the norms' mean and silu 0.8-2.3 % (docs/performance.md,
  // h200-2026-12-06 and h100-2026-12-06). The two-word dot sums in int32;
  // a quantizer divides twice per block, for d and its reciprocal, side by
  // side; the norms multiply by the launcher's 1/n; silu's divide is fast.
  const std::string ptx = kernels_ptx({
      "gemv_kernel<WeightFormat::q8_0_split, Activation::int8x2, 1, false>",
      "gemv_kernel<WeightFormat::q8_0_split, Activation::int8, 1, false>",
      "gemv_ahead_kernel<WeightFormat::q8_0_split, Activation::int8x2, 1, false>",
      "quantize_q8_kernel<false, false>",
      "quantize_q8_kernel<true, false>",
      "rms_norm_kernel<true, true, 1, false>",
      "rope_kernel<RopeMode::neox, CachePrecision::f16, false>",
  });
  const std::string two_words = ptx_entry(ptx, {"11gemv_kernel", "ActivationE2"});
  const std::string one_word = ptx_entry(ptx, {"11gemv_kernel", "ActivationE1"});
  const std::string ahead = ptx_entry(ptx, {"17gemv_ahead_kernel"});
  const std::string quantize = ptx_entry(ptx, {"18quantize_q8_kernelILb0ELb0E"});
  const std::string swiglu_quantize = ptx_entry(ptx, {"18quantize_q8_kernelILb1ELb0E"});
  const std::string add_norm = ptx_entry(ptx, {"15rms_norm_kernelILb1ELb1ELi1ELb0E"});
  const std::string rope = ptx_entry(ptx, {"11rope_kernel"});
  for (const std::string* entry : {&two_words, &one_word, &ahead, &quantize, &swiglu_quantize, &add_norm, &rope})
    REQUIRE_FALSE(entry->empty());
  CHECK(count_of(two_words, "dp4a") >= 8);  // the entries are the kernels meant
  CHECK(count_of(two_words, "div.rn.f32") == 0);
  CHECK(count_of(one_word, "div.rn.f32") == 0);
  CHECK(count_of(ahead, "div.rn.f32") == 0);
  CHECK(count_of(quantize, "div.rn.f32") == 2);
  CHECK(count_of(swiglu_quantize, "div.rn.f32") == 2);
  CHECK(count_of(add_norm, "div.rn.f32") == 2);  // its quantizer's pair, not the mean
  CHECK(count_of(rope, "rsqrt") >= 1);           // the entry with the head norm
  CHECK(count_of(rope, "div.rn.f32") == 0);
  // The GEMV forms its slice and bounds before the wait (WarpRows), where a
  // parameter read may go; none is divided for again after it.
  const auto integer_divisions = [](const std::string& ptx_text) {
    return count_of(ptx_text, "rem.s32") + count_of(ptx_text, "rem.u32") + count_of(ptx_text, "div.s32") +
           count_of(ptx_text, "div.u32");
  };
  for (const std::string* gemv : {&two_words, &one_word, &ahead}) {
    const size_t wait = gemv->find("griddepcontrol.wait");
    REQUIRE(wait != std::string::npos);
    CHECK(integer_divisions(gemv->substr(0, wait)) >= 1);  // the slice, before the wait
    CHECK(integer_divisions(gemv->substr(wait)) == 0);
  }
}

TEST_CASE("the fused FFN kernel: weights before its wait, activations and atomics after, the quantizer's divides only",
          "[.][emit-nvcc]") {
  // kernels/ffn.cuh: before the wait only constants load (the gate/up rows'
  // first chunks and scales and, with PreloadDown, the first down group);
  // the input and every write come after it. Its
  // SwiGLU quantizer divides twice a block (d and its reciprocal), as the
  // quantize launch does; the down sums leave as float4 reductions.
  const std::string ptx = kernels_ptx({"ffn_kernel<1, 16, 1, true>", "ffn_kernel<2, 16, 1, false>"});
  for (const char* form : {"10ffn_kernelILi1ELi16ELi1ELb1E", "10ffn_kernelILi2ELi16ELi1ELb0E"}) {
    INFO(form);
    const std::string entry = ptx_entry(ptx, {form});
    REQUIRE_FALSE(entry.empty());
    const size_t wait = entry.find("griddepcontrol.wait");
    REQUIRE(wait != std::string::npos);
    const std::string before = entry.substr(0, wait), after = entry.substr(wait);
    // Weight chunks stream past L1 (no_allocate), their scales and the
    // input's 16-byte chunks load through the read-only path: only the
    // former and the scales may come before the wait.
    CHECK(count_of(before, "ld.global.nc.L1::no_allocate") >= 4);
    CHECK(count_of(before, "ld.global") == count_of(before, "ld.global.nc"));
    CHECK(count_of(before, "ld.global.nc.v4") == 0);
    CHECK(count_of(after, "ld.global.nc.v4") >= 2);  // the input's high and low words
    CHECK(count_of(before, "st.global") + count_of(before, "red.global") + count_of(before, "atom.global") == 0);
    CHECK(count_of(after, "dp4a") >= 8);
    CHECK(count_of(after, ".v4.f32") >= 1);  // the float4 atomic add of a row group
    CHECK(count_of(entry, "div.rn.f32") == 2);
  }
}

TEST_CASE("the fused FFN kernel with two gate/up trips ahead loads one more weight chunk a row before its wait",
          "[.][emit-nvcc]") {
  // kernels/ffn.cuh Ahead = 2 (bench/variants.sh ffnahead:2): each of a
  // lane's 4 gate/up rows (Chunks 1, 16 warps) loads its second chunk before
  // the wait too; still only read-only constants before it.
  const std::string ptx = kernels_ptx({"ffn_kernel<1, 16, 1, true>", "ffn_kernel<1, 16, 1, true, 2>"});
  std::string before[2];
  const char* forms[2] = {"10ffn_kernelILi1ELi16ELi1ELb1ELi1E", "10ffn_kernelILi1ELi16ELi1ELb1ELi2E"};
  for (int i = 0; i < 2; ++i) {
    const std::string entry = ptx_entry(ptx, {forms[i]});
    REQUIRE_FALSE(entry.empty());
    const size_t wait = entry.find("griddepcontrol.wait");
    REQUIRE(wait != std::string::npos);
    before[i] = entry.substr(0, wait);
    CHECK(count_of(before[i], "ld.global") == count_of(before[i], "ld.global.nc"));
    CHECK(count_of(before[i], "st.global") + count_of(before[i], "red.global") == 0);
  }
  CHECK(count_of(before[1], "ld.global.nc.L1::no_allocate") == count_of(before[0], "ld.global.nc.L1::no_allocate") + 4);
}

TEST_CASE("the fused FFN kernel loads 1.7B's second down chunk between its wait and its barriers",
          "[.][emit-nvcc]") {
  // kernels/ffn.cuh kFfnDownAfterLoop: with two intermediate blocks and the
  // first down group preloaded (1.7B's form) the group's second chunk (8
  // pieces and scales) loads after the gate/up loop, before the first
  // barrier; with -DLANEC_FFN_DOWN_AFTER_LOOP=0 after the barriers.
  const std::vector<std::string> kernels = {"ffn_kernel<2, 16, 1, true>"};
  int loads[2] = {0, 0};
  const std::string flags[2] = {"-DLANEC_FFN_DOWN_AFTER_LOOP=0", ""};
  for (int i = 0; i < 2; ++i) {
    const std::string entry = ptx_entry(kernels_ptx(kernels, flags[i]), {"10ffn_kernelILi2ELi16ELi1ELb1E"});
    REQUIRE_FALSE(entry.empty());
    const size_t wait = entry.find("griddepcontrol.wait");
    const size_t barrier = entry.find("bar.sync", wait);
    REQUIRE(wait != std::string::npos);
    REQUIRE(barrier != std::string::npos);
    loads[i] = count_of(entry.substr(wait, barrier - wait), "ld.global.nc.L1::no_allocate");
  }
  CHECK(loads[1] >= loads[0] + 9);
}

TEST_CASE("the early-trigger kernels let the next launch start before their wait, the others after it",
          "[.][emit-nvcc]") {
  // Rule early_trigger (kernels/common.cuh pdl_trigger_early): the trigger
  // is the kernel's first PDL instruction; without it the wait comes first.
  const std::string ptx = kernels_ptx({
      "quantize_q8_kernel<true, false>",
      "quantize_q8_kernel<true, true>",
      "rms_norm_kernel<true, true, 1, false>",
      "rms_norm_kernel<true, true, 1, true>",
      "rope_kernel<RopeMode::neox, CachePrecision::f16, false>",
      "rope_kernel<RopeMode::neox, CachePrecision::f16, true>",
  });
  const auto trigger_first = [](const std::string& entry) {
    const size_t trigger = entry.find("griddepcontrol.launch_dependents");
    const size_t wait = entry.find("griddepcontrol.wait");
    REQUIRE(trigger != std::string::npos);
    REQUIRE(wait != std::string::npos);
    return trigger < wait;
  };
  for (const char* late : {"18quantize_q8_kernelILb1ELb0E", "15rms_norm_kernelILb1ELb1ELi1ELb0E", "CachePrecisionE1ELb0E"}) {
    INFO(late);
    const std::string entry = ptx_entry(ptx, {late});
    REQUIRE_FALSE(entry.empty());
    CHECK_FALSE(trigger_first(entry));
  }
  for (const char* early : {"18quantize_q8_kernelILb1ELb1E", "15rms_norm_kernelILb1ELb1ELi1ELb1E", "CachePrecisionE1ELb1E"}) {
    INFO(early);
    const std::string entry = ptx_entry(ptx, {early});
    REQUIRE_FALSE(entry.empty());
    CHECK(trigger_first(entry));
  }
  // The early rope triggers only below a position (p.early_trigger_rows,
  // rope.cuh), so it loads its position first; the early norm triggers at
  // its start, before its weights load.
  const auto load_before_trigger = [](const std::string& entry) {
    const size_t load = entry.find("ld.global");
    return load != std::string::npos && load < entry.find("griddepcontrol.launch_dependents");
  };
  CHECK(load_before_trigger(ptx_entry(ptx, {"CachePrecisionE1ELb1E"})));
  CHECK_FALSE(load_before_trigger(ptx_entry(ptx, {"15rms_norm_kernelILb1ELb1ELi1ELb1E"})));
}
