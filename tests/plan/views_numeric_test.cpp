// slice_read and join_in_place, numerically: a small hand-made model whose
// step concatenates two projections (join_in_place: the GEMV parts write into
// views of the joined buffer) and reads a slice of the join (slice_read: a
// view at an offset), run through the planned schedule and the reference
// executor. Held, either rule leaves an op no kernel takes, which must be
// refused with the op named.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/graph/builder.h"
#include "lib/plan/cpu_schedule.h"
#include "lib/plan/planner.h"
#include "lib/ref/executor.h"
#include "lib/ref/weights.h"
#include "tests/plan/plan_fixtures.h"

namespace lanec {
namespace {

constexpr int64_t kVocab = 16, kDim = 64;

std::vector<uint8_t> f32_bytes(int64_t n, float scale, int salt) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    float v = scale * std::sin(0.37f * static_cast<float>(i) + static_cast<float>(salt));
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  return bytes;
}

struct JoinModel {
  std::vector<uint8_t> bytes;
  std::unique_ptr<GgufFile> gguf;
  Graph graph;
};

std::unique_ptr<JoinModel> join_model() {
  GgufWriter w;
  w.set("general.architecture", GgufValue::string("test"));
  w.add_tensor("table", {kDim, kVocab}, GgmlType::F32, f32_bytes(kDim * kVocab, 1.0f, 1));
  w.add_tensor("wa", {kDim, 32}, GgmlType::F32, f32_bytes(kDim * 32, 0.2f, 2));
  w.add_tensor("wb", {kDim, 32}, GgmlType::F32, f32_bytes(kDim * 32, 0.2f, 3));
  w.add_tensor("wo", {32, kVocab}, GgmlType::F32, f32_bytes(32 * kVocab, 0.3f, 4));
  auto m = std::make_unique<JoinModel>();
  m->bytes = w.to_bytes();
  m->gguf = std::make_unique<GgufFile>(GgufFile::parse(m->bytes.data(), m->bytes.size(), "join.gguf"));
  GraphBuilder b;
  b.set_metadata("arch", std::string("test"));
  TensorId token = b.param("token", GgmlType::I32, {1});
  b.param("pos", GgmlType::I32, {1});
  TensorId row = b.apply(OpKind::embed_get_rows, "row", {kDim}, {b.constant("table", GgmlType::F32, {kVocab, kDim}), token});
  TensorId a = b.apply(OpKind::matmul, "a", {32}, {row, b.constant("wa", GgmlType::F32, {32, kDim})});
  TensorId c = b.apply(OpKind::matmul, "c", {32}, {row, b.constant("wb", GgmlType::F32, {32, kDim})});
  TensorId y = b.apply(OpKind::concat, "y", {64}, {a, c});
  TensorId s = b.apply(OpKind::slice, "s", {32}, {y}, {{"offset", int64_t{16}}});
  TensorId logits = b.apply(OpKind::matmul, "logits", {kVocab}, {s, b.constant("wo", GgmlType::F32, {kVocab, 32})});
  b.output(logits);
  b.output(b.apply(OpKind::argmax, "next_token", {1}, {logits}, {}, GgmlType::I32));
  m->graph = b.finish();
  return m;
}

TEST_CASE("join_in_place and slice_read views compute what concat and slice compute", "[plan]") {
  auto m = join_model();
  PlanResult plan = plan_graph(m->graph, test::test_knobs("f32", "dequant"), {});
  const Schedule& s = plan.schedule;
  CHECK(s.buffer("a").view_of == "y");
  CHECK(s.buffer("c").view_offset == 32);
  CHECK(s.buffer("s").view_of == "y");
  CHECK(s.buffer("s").view_offset == 16);
  CHECK(s.census.launches.at("gemv") == 2);  // a and c as one launch with parts, then logits
  WeightStore weights(*m->gguf, 1);
  CpuScheduleExecutor scheduled(s, weights);
  ReferenceExecutor reference(m->graph, weights, ReferenceOptions{1});
  for (int32_t token : {3, 11}) {
    std::vector<float> ref = reference.step(token, 0);
    std::vector<float> got = scheduled.step(token, 0);
    for (size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == Approx(ref[i]).epsilon(1e-5).margin(1e-6));
  }
}

TEST_CASE("held, slice_read and join_in_place leave ops no kernel takes", "[plan]") {
  auto m = join_model();
  PlanOptions join;
  join.held = {"join_in_place"};
  CHECK_THROWS_WITH(plan_graph(m->graph, test::test_knobs("f32", "dequant"), join),
                    "no kernel for op #3 (concat -> y): kind concat, output y: there is no copy "
                    "kernel; join_in_place writes the parts in place (held or declined here)");
  PlanOptions slice;
  slice.held = {"slice_read"};
  CHECK_THROWS_WITH(plan_graph(m->graph, test::test_knobs("f32", "dequant"), slice),
                    Catch::StartsWith("no kernel for op #4 (slice -> s): kind slice"));
}

}  // namespace
}  // namespace lanec
