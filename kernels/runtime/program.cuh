// The host side of an emitted program: run_program(argc, argv, spec) parses
// the command line, maps and checks the GGUF, uploads the weights, captures
// spec.step once as a CUDA graph and replays it per token. --bench times
// prefill and decode; --profile times each launch of one step (run_profile).
//
// Decoding (docs/emitted-program.md):
//  - Prefill is token by token through the same graph: before each replay the
//    host queues a copy of the next prompt token into the token slot (no
//    synchronization); the graph's argmax advances the position on the device.
//  - Greedy (--temp 0): argmax runs in the graph and writes the next token and
//    position on the device; the host queues up to kDrainEvery replays, then
//    reads the argmax ring back once and streams that batch of text.
//  - Sampling (--temp > 0) and --logits: the host reads the logits after every
//    step (sampling on the host, sampler.h) and writes the chosen token into
//    the token slot, overriding the argmax.
// Exit codes: 0 ok, 1 CUDA failure, 2 usage, 3 model file, 4 prompt,
// 5 GPU (none, too old, too little memory), 6 output file.
#pragma once

#include <cuda_profiler_api.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/lanec_kernels.cuh"
#include "kernels/runtime/npy_writer.h"
#include "kernels/runtime/options.h"
#include "kernels/runtime/sampler.h"
#include "kernels/runtime/spec.h"
#include "kernels/runtime/weight_upload.cuh"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/tokenizer/gguf_vocab.h"
#include "lib/tokenizer/tokenizer.h"

namespace lanec::runtime {

enum ExitCode : int {
  kExitOk = 0,
  kExitCuda = 1,
  kExitUsage = 2,
  kExitModel = 3,
  kExitPrompt = 4,
  kExitGpu = 5,
  kExitOutput = 6,
};

constexpr int kDrainEvery = 16;  // greedy replays queued between reads of the argmax ring

inline int fail(const char* prog, int code, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", prog, message.c_str());
  return code;
}

// The device state of one running program.
struct Device {
  uint8_t* weights = nullptr;
  uint8_t* buffers = nullptr;
  DecodeSlots slots{};
  cudaStream_t stream = nullptr;
  cudaGraphExec_t graph = nullptr;
  cudaGraphExec_t graph_long = nullptr;  // the long-context step (lengths from long_from on), if any
  int long_from = 0;                     // 0: one graph for every length
  int position = 0;                      // the next step's position, as the host mirrors the device's
  int* pinned_tokens = nullptr;  // prompt / sampled tokens the host queues copies from
  int* ring_host = nullptr;      // ring + count read back
  int ring_capacity = 0;

  // Teardown is checked too, but only warns: the results are out by now.
  static void check_teardown(cudaError_t status, const char* what) {
    if (status != cudaSuccess) std::fprintf(stderr, "warning: %s at exit: %s\n", what, cudaGetErrorString(status));
  }
  ~Device() {
    if (graph) check_teardown(cudaGraphExecDestroy(graph), "cudaGraphExecDestroy");
    if (graph_long) check_teardown(cudaGraphExecDestroy(graph_long), "cudaGraphExecDestroy");
    if (stream) check_teardown(cudaStreamDestroy(stream), "cudaStreamDestroy");
    if (pinned_tokens) check_teardown(cudaFreeHost(pinned_tokens), "cudaFreeHost");
    if (ring_host) check_teardown(cudaFreeHost(ring_host), "cudaFreeHost");
    if (weights) check_teardown(cudaFree(weights), "cudaFree");
    if (buffers) check_teardown(cudaFree(buffers), "cudaFree");
  }

  // Whether the step at `pos` (reading pos + 1 positions) is a long-context step.
  bool long_context_at(int pos) const { return long_from > 0 && pos + 1 >= long_from; }
  // One step at `position`; every step advances the device position by one.
  void replay() {
    LANEC_CUDA_CHECK(cudaGraphLaunch(long_context_at(position) ? graph_long : graph, stream));
    ++position;
  }
  // Sets the position the next step runs at (device and mirror).
  void set_position(int pos) {
    position = pos;
    // Pageable source: the copy has read `pos` when the call returns.
    LANEC_CUDA_CHECK(cudaMemcpyAsync(slots.pos, &pos, sizeof(int), cudaMemcpyHostToDevice, stream));
  }
  // Queues token slot <- pinned_tokens[i] (ordered before the next replay).
  void queue_token(size_t i) {
    LANEC_CUDA_CHECK(cudaMemcpyAsync(slots.token, pinned_tokens + i, sizeof(int), cudaMemcpyHostToDevice, stream));
  }
  // Resets the decode state: position 0, empty ring (caches are overwritten
  // row by row before attention reads them, so they need no clearing).
  void reset() {
    position = 0;
    LANEC_CUDA_CHECK(cudaMemsetAsync(slots.pos, 0, sizeof(int), stream));
    LANEC_CUDA_CHECK(cudaMemsetAsync(slots.ring_count, 0, sizeof(int), stream));
  }
  // Reads the ring and its count back (synchronizes); returns the count.
  int read_ring() {
    LANEC_CUDA_CHECK(cudaMemcpyAsync(ring_host, slots.ring, sizeof(int) * ring_capacity, cudaMemcpyDeviceToHost, stream));
    LANEC_CUDA_CHECK(cudaMemcpyAsync(ring_host + ring_capacity, slots.ring_count, sizeof(int), cudaMemcpyDeviceToHost, stream));
    LANEC_CUDA_CHECK(cudaStreamSynchronize(stream));
    return ring_host[ring_capacity];
  }
  int ring_token(int index) const { return ring_host[index % ring_capacity]; }
  void read_logits(std::vector<float>& out, int n_vocab) {
    out.resize(static_cast<size_t>(n_vocab));
    LANEC_CUDA_CHECK(cudaMemcpyAsync(out.data(), slots.logits, sizeof(float) * n_vocab, cudaMemcpyDeviceToHost, stream));
    LANEC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

// Prints generated text as it arrives (control tokens left out).
struct TextStream {
  const Tokenizer* tokenizer = nullptr;
  bool enabled = true;
  void put(int32_t id) {
    if (!enabled) return;
    if (tokenizer == nullptr) {
      std::printf(" %d", id);
    } else if (!tokenizer->is_control(id)) {
      const std::string piece = tokenizer->token_piece(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
    }
  }
  void flush() {
    if (enabled) std::fflush(stdout);
  }
};

inline float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0.0f;
  LANEC_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double mean = 0.0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double s = 0.0;
  for (double x : v) s += (x - mean) * (x - mean);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

// The first length (positions attention reads) at which an attention launch
// can merge more than one cluster of splits (kernels/attention.cuh): from
// there on the step replays as its long-context graph, whose attention
// launches leave that merge to a launch of its own. 0: there is none.
// Measurement switch: -DLANEC_ATTN_MERGE_LAUNCH=0 keeps one graph, whose
// attention launches merge every cluster in place.
#ifndef LANEC_ATTN_MERGE_LAUNCH
#define LANEC_ATTN_MERGE_LAUNCH 1
#endif
constexpr bool long_context_graph_built() {
  return LANEC_ATTN_MERGE_LAUNCH && LANEC_ATTN_CLUSTER && kernels::kAttnClusterLevels;
}
inline int long_context_from(const ProgramSpec& spec) {
  if (!long_context_graph_built()) return 0;
  return kernels::attention_clusters_from(spec.max_attention_splits);
}

// The splits an attention launch of the short-context graph takes. That
// graph serves the lengths below long_context_from, where one cluster of
// splits covers every key, so the plan's further grid rows would only launch
// blocks that exit at once (Qwen3-0.6B at 64 splits: 1,024 blocks a launch, 128 of them
// used; capped, +0.6 % a token, docs/performance.md). With one graph for
// every length the plan's splits stay.
constexpr int short_context_splits(int n_split) {
  return long_context_graph_built() && n_split > kernels::kAttnClusterSplits ? kernels::kAttnClusterSplits : n_split;
}

// spec.step captured once as an instantiated graph.
inline cudaGraphExec_t capture_step(const ProgramSpec& spec, cudaStream_t stream, bool long_context) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  LANEC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  spec.step(stream, nullptr, long_context);
  LANEC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  LANEC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  LANEC_CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// --bench: prefill of the prompt (pp) and greedy decode of n tokens (tg),
// timed with CUDA events over `repeats` runs after one warm-up run; prints
// the median ms/token and tokens/s (mean ± sd over the runs).
inline void run_bench(Device& dev, const ProgramSpec& spec, const std::vector<int32_t>& prompt, int n_decode,
                      int repeats, const std::string& gpu_name) {
  cudaEvent_t e0, e1, e2;
  LANEC_CUDA_CHECK(cudaEventCreate(&e0));
  LANEC_CUDA_CHECK(cudaEventCreate(&e1));
  LANEC_CUDA_CHECK(cudaEventCreate(&e2));
  std::vector<double> pp_ms, tg_ms;
  for (int r = -1; r < repeats; ++r) {  // r = -1: warm-up
    dev.reset();
    LANEC_CUDA_CHECK(cudaEventRecord(e0, dev.stream));
    for (size_t i = 0; i < prompt.size(); ++i) {
      dev.queue_token(i);
      dev.replay();
    }
    LANEC_CUDA_CHECK(cudaEventRecord(e1, dev.stream));
    for (int i = 0; i < n_decode; ++i) dev.replay();
    LANEC_CUDA_CHECK(cudaEventRecord(e2, dev.stream));
    LANEC_CUDA_CHECK(cudaEventSynchronize(e2));
    if (r < 0) continue;
    pp_ms.push_back(static_cast<double>(elapsed_ms(e0, e1)) / static_cast<double>(prompt.size()));
    if (n_decode > 0) tg_ms.push_back(static_cast<double>(elapsed_ms(e1, e2)) / n_decode);
  }
  LANEC_CUDA_CHECK(cudaEventDestroy(e0));
  LANEC_CUDA_CHECK(cudaEventDestroy(e1));
  LANEC_CUDA_CHECK(cudaEventDestroy(e2));

  const std::string model = std::string(spec.arch) + " " + (spec.model_name[0] ? spec.model_name : "(unnamed)");
  char size[32];
  std::snprintf(size, sizeof size, "%.2f MiB", static_cast<double>(spec.weight_bytes) / 1048576.0);
  std::printf("| model | weights | planned for | GPU | test | ms/token | t/s |\n");
  std::printf("| --- | ---: | --- | --- | --- | ---: | ---: |\n");
  auto row = [&](const std::string& test, const std::vector<double>& ms) {
    if (ms.empty()) return;
    std::vector<double> tps;
    for (double m : ms) tps.push_back(1000.0 / m);
    double mean = 0.0;
    for (double t : tps) mean += t;
    mean /= static_cast<double>(tps.size());
    std::printf("| %s | %s | sm_%d | %s | %s | %.3f | %.2f ± %.2f |\n", model.c_str(), size, spec.sm, gpu_name.c_str(),
                test.c_str(), median(ms), mean, stddev(tps));
  };
  row("pp" + std::to_string(prompt.size()), pp_ms);
  row("tg" + std::to_string(n_decode), tg_ms);
}

// CUDA events around the launches of one step run directly on the stream
// (not the graph): start() before step(), step() marks the end of launch i.
// With count_stamps (programs built with -DLANEC_CHAIN_STAMPS), mark() also
// reads the chain-stamp counter after each launch instead of timing it: how
// many kernels each launch of the step issues at this context (the attention's
// merge launch in the long-context step is a second kernel of its launch).
class LaunchProfiler {
 public:
  explicit LaunchProfiler(size_t n_launches, bool count_stamps = false)
      : events_(n_launches + 1, nullptr), stamp_counts_(count_stamps ? n_launches : 0, 0u) {
    for (cudaEvent_t& e : events_) LANEC_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~LaunchProfiler() {
    for (cudaEvent_t e : events_)
      if (e) Device::check_teardown(cudaEventDestroy(e), "cudaEventDestroy");
  }
  LaunchProfiler(const LaunchProfiler&) = delete;
  LaunchProfiler& operator=(const LaunchProfiler&) = delete;

  void start(cudaStream_t stream) { LANEC_CUDA_CHECK(cudaEventRecord(events_.front(), stream)); }
  void mark(cudaStream_t stream, size_t launch) {
    if (launch + 1 < events_.size()) LANEC_CUDA_CHECK(cudaEventRecord(events_[launch + 1], stream));
#ifdef LANEC_CHAIN_STAMPS
    if (launch < stamp_counts_.size())
      LANEC_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&stamp_counts_[launch], kernels::g_chain_count, sizeof(unsigned), 0,
                                                 cudaMemcpyDeviceToHost, stream));
#endif
  }
  // With count_stamps, after the step has run: the stamp counter after each launch.
  const std::vector<unsigned>& stamp_counts() {
    LANEC_CUDA_CHECK(cudaEventSynchronize(events_.back()));
    return stamp_counts_;
  }
  // Waits for the step; the µs of each launch (end of the previous mark to its own).
  std::vector<double> launch_us() {
    LANEC_CUDA_CHECK(cudaEventSynchronize(events_.back()));
    std::vector<double> us(events_.size() - 1);
    for (size_t i = 0; i < us.size(); ++i) us[i] = 1000.0 * static_cast<double>(elapsed_ms(events_[i], events_[i + 1]));
    return us;
  }

 private:
  std::vector<cudaEvent_t> events_;
  std::vector<unsigned> stamp_counts_;
};

#ifdef LANEC_CHAIN_STAMPS
// The first stamp of each launch of the step at `position` (and, past the
// last, the total): the step runs once on the stream with the stamp counter
// read after every launch, since a launch may issue more than one kernel
// (the long-context attention's merge launch). Empty where the counter ran
// past its capacity.
inline std::vector<size_t> launch_first_stamps(Device& dev, const ProgramSpec& spec, int position) {
  const unsigned zero = 0;
  dev.set_position(position);
  LANEC_CUDA_CHECK(cudaMemcpyToSymbolAsync(kernels::g_chain_count, &zero, sizeof zero, 0, cudaMemcpyHostToDevice,
                                           dev.stream));
  LaunchProfiler counter(spec.n_launches, true);
  counter.start(dev.stream);
  spec.step(dev.stream, &counter, dev.long_context_at(position));
  const std::vector<unsigned>& after = counter.stamp_counts();
  std::vector<size_t> first(spec.n_launches + 1, 0);
  for (size_t i = 0; i < spec.n_launches; ++i) {
    if (after[i] < first[i] || after[i] > kernels::kChainStampCapacity) return {};
    first[i + 1] = after[i];
  }
  return first;
}

// --profile of a program built with -DLANEC_CHAIN_STAMPS (common.cuh): replays
// the step `repeats` times at `position` and prints what each launch costs the
// chain (the first stamp of the next launch minus its own; the last launch,
// which has no next, is left out), as µs summed by kind and the launches that
// cost most. A launch of several kernels shows each kernel's share in the
// layer's list.
inline void print_chain_profile(Device& dev, const ProgramSpec& spec, int position, int repeats) {
  const size_t n = spec.n_launches;
  if (n < 2) return;
  const std::vector<size_t> first = launch_first_stamps(dev, spec, position);
  if (first.empty() || first[n] < 2) {
    std::printf("chain stamps: fewer than 2 or more than %u stamps a step; no in-graph table\n",
                kernels::kChainStampCapacity);
    return;
  }
  const size_t n_stamps = first[n];
  std::vector<std::vector<double>> cost(n_stamps - 1);  // kernel j: stamp j+1 minus stamp j
  std::vector<unsigned long long> stamps(n_stamps);
  std::vector<double> span;
  const unsigned zero = 0;
  for (int r = -1; r < repeats; ++r) {
    dev.set_position(position);
    LANEC_CUDA_CHECK(cudaMemcpyToSymbolAsync(kernels::g_chain_count, &zero, sizeof zero, 0, cudaMemcpyHostToDevice,
                                             dev.stream));
    dev.replay();
    LANEC_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
    unsigned count = 0;
    LANEC_CUDA_CHECK(cudaMemcpyFromSymbol(&count, kernels::g_chain_count, sizeof count));
    if (count != n_stamps) {
      std::printf("chain stamps: %u stamps in the replay, %zu when the step ran on the stream; no in-graph table\n",
                  count, n_stamps);
      return;
    }
    LANEC_CUDA_CHECK(cudaMemcpyFromSymbol(stamps.data(), kernels::g_chain_stamps, n_stamps * sizeof(unsigned long long)));
    if (r < 0) continue;
    for (size_t j = 0; j + 1 < n_stamps; ++j) cost[j].push_back(static_cast<double>(stamps[j + 1] - stamps[j]) / 1000.0);
    span.push_back(static_cast<double>(stamps[n_stamps - 1] - stamps[0]) / 1000.0);
  }
  std::vector<double> kernel_mean(n_stamps - 1, 0.0);  // µs kernel j costs, mean over the replays
  for (size_t j = 0; j + 1 < n_stamps; ++j) {
    for (double c : cost[j]) kernel_mean[j] += c;
    kernel_mean[j] /= static_cast<double>(cost[j].size());
  }
  // Launch i: its kernels first[i] .. first[i+1]-1, those with a stamp after
  // them (the step's last kernel has none and is left out).
  auto kernels_of = [&](size_t i) { return std::make_pair(first[i], std::min(first[i + 1], n_stamps - 1)); };
  std::vector<double> mean(n - 1, 0.0);
  for (size_t i = 0; i + 1 < n; ++i)
    for (size_t j = kernels_of(i).first; j < kernels_of(i).second; ++j) mean[i] += kernel_mean[j];
  std::vector<std::pair<std::string, std::pair<int, double>>> by_kind;  // kind -> launches, mean µs summed
  std::vector<std::pair<double, size_t>> by_launch;
  for (size_t i = 0; i + 1 < n; ++i) {
    by_launch.push_back({mean[i], i});
    auto it = std::find_if(by_kind.begin(), by_kind.end(), [&](const auto& k) { return k.first == spec.launches[i].kind; });
    if (it == by_kind.end()) it = by_kind.insert(by_kind.end(), {spec.launches[i].kind, {0, 0.0}});
    it->second.first += 1;
    it->second.second += mean[i];
  }
  std::sort(by_kind.begin(), by_kind.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::printf("\nin-graph chain (-DLANEC_CHAIN_STAMPS): launch i costs the stamp of launch i+1 minus its own (block 0"
              " past its wait), mean of %d replays; %zu kernels for %zu launches; first to last stamp: median %.2f µs\n",
              repeats, n_stamps, n, median(span));
  std::printf("| kind | launches | µs | µs a launch |\n| --- | ---: | ---: | ---: |\n");
  for (const auto& k : by_kind)
    std::printf("| %s | %d | %.2f | %.2f |\n", k.first.c_str(), k.second.first, k.second.second,
                k.second.second / k.second.first);
  std::sort(by_launch.begin(), by_launch.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::printf("\n| # | launch | ops | chain µs |\n| ---: | --- | --- | ---: |\n");
  for (size_t i = 0; i < std::min<size_t>(by_launch.size(), 24); ++i) {
    const LaunchInfo& l = spec.launches[by_launch[i].second];
    std::printf("| %zu | %s | %s | %.2f |\n", by_launch[i].second, l.name, l.ops, by_launch[i].first);
  }
  // Layer 1's launches in order, with each kernel's share where a launch has several.
  std::printf("\none layer in order:\n| # | launch | chain µs | its kernels' µs |\n| ---: | --- | ---: | --- |\n");
  for (size_t i = 0; i + 1 < n; ++i) {
    const std::string name = spec.launches[i].name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, "_l01") != 0) continue;
    std::string shares;
    const auto [j0, j1] = kernels_of(i);
    if (j1 > j0 + 1) {
      for (size_t j = j0; j < j1; ++j) {
        char part[32];
        std::snprintf(part, sizeof part, "%s%.2f", j == j0 ? "" : " + ", kernel_mean[j]);
        shares += part;
      }
    }
    std::printf("| %zu | %s | %.2f | %s |\n", i, spec.launches[i].name, mean[i], shares.c_str());
  }
}
#endif

// --profile: runs the prompt through the graph (up to n_ctx - 1 tokens), then
// times one step at the next position P, `repeats` times after one warm-up,
// each with the position reset to P (so attention always reads P + 1 cached
// positions): per launch directly on the stream with a LaunchProfiler, and
// the whole step as one graph replay. Prints the launches by median time with
// the bytes each moves (the planner's sizes, spec.launches) and GB/s, then
// the sum against the replay.
inline void run_profile(Device& dev, const ProgramSpec& spec, const std::vector<int32_t>& prompt, int repeats,
                        const std::string& gpu_name) {
  const size_t n_prefill = std::min(prompt.size(), static_cast<size_t>(std::max(spec.n_ctx - 1, 0)));
  dev.reset();
  for (size_t i = 0; i < n_prefill; ++i) {
    dev.queue_token(i);
    dev.replay();
  }
  LANEC_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
  const int position = static_cast<int>(n_prefill);
  auto set_position = [&] { dev.set_position(position); };

  LaunchProfiler prof(spec.n_launches);
  std::vector<std::vector<double>> samples(spec.n_launches);
  for (int r = -1; r < repeats; ++r) {  // r = -1: warm-up
    set_position();
    // The first timed step is the profiler's range: a hardware-counter
    // profiler started with its range off (bench/ncu_profile.sh) sees one
    // step's launches, each on its own, and not the prompt's graph replays.
    if (r == 0) LANEC_CUDA_CHECK(cudaProfilerStart());
    prof.start(dev.stream);
    spec.step(dev.stream, &prof, dev.long_context_at(position));
    const std::vector<double> us = prof.launch_us();
    if (r == 0) LANEC_CUDA_CHECK(cudaProfilerStop());
    if (r < 0) continue;
    for (size_t i = 0; i < us.size(); ++i) samples[i].push_back(us[i]);
  }
  cudaEvent_t e0, e1;
  LANEC_CUDA_CHECK(cudaEventCreate(&e0));
  LANEC_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<double> replay_us;
  for (int r = -1; r < repeats; ++r) {
    set_position();
    LANEC_CUDA_CHECK(cudaEventRecord(e0, dev.stream));
    dev.replay();
    LANEC_CUDA_CHECK(cudaEventRecord(e1, dev.stream));
    LANEC_CUDA_CHECK(cudaEventSynchronize(e1));
    if (r >= 0) replay_us.push_back(1000.0 * static_cast<double>(elapsed_ms(e0, e1)));
  }
  LANEC_CUDA_CHECK(cudaEventDestroy(e0));
  LANEC_CUDA_CHECK(cudaEventDestroy(e1));

  struct Row {
    size_t index;
    double us;
    uint64_t bytes;
  };
  const uint64_t cached_positions = static_cast<uint64_t>(position) + 1;
  std::vector<Row> rows;
  double total_us = 0.0;
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < spec.n_launches; ++i) {
    const LaunchInfo& l = spec.launches[i];
    const uint64_t bytes = l.weight_bytes + l.activation_bytes + l.cache_bytes_per_position * cached_positions;
    rows.push_back({i, median(samples[i]), bytes});
    total_us += rows.back().us;
    total_bytes += bytes;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.us > b.us; });
  auto gbps = [](uint64_t bytes, double us) { return us > 0.0 ? static_cast<double>(bytes) / us / 1000.0 : 0.0; };

  std::printf("profile: %s %s on %s (planned for sm_%d): one step at position %d (attention reads %d cached "
              "positions), median of %d runs\n",
              spec.arch, spec.model_name[0] ? spec.model_name : "(unnamed)", gpu_name.c_str(), spec.sm, position,
              position + 1, repeats);
  std::printf("| # | launch | kind | ops | µs | bytes | GB/s |\n");
  std::printf("| ---: | --- | --- | --- | ---: | ---: | ---: |\n");
  for (const Row& row : rows) {
    const LaunchInfo& l = spec.launches[row.index];
    std::printf("| %zu | %s | %s | %s | %.2f | %llu | %.1f |\n", row.index, l.name, l.kind, l.ops, row.us,
                static_cast<unsigned long long>(row.bytes), gbps(row.bytes, row.us));
  }
  const double replay = median(replay_us);
  std::printf("| | total: %zu launches run one by one | | | %.2f | %llu | %.1f |\n", spec.n_launches, total_us,
              static_cast<unsigned long long>(total_bytes), gbps(total_bytes, total_us));
  std::printf("| | graph replay (one token) | | | %.2f | %llu | %.1f |\n", replay,
              static_cast<unsigned long long>(total_bytes), gbps(total_bytes, replay));
#ifdef LANEC_CHAIN_STAMPS
  print_chain_profile(dev, spec, position, std::max(repeats, 20));
#endif
}

inline int run_program(int argc, char** argv, const ProgramSpec& spec) {
  const char* prog = argc > 0 ? argv[0] : "model";
  ProgramOptions opt;
  const std::string usage_error = parse_options(argc, argv, opt);
  if (opt.help) {
    std::printf("%s: %s (%s), planned for sm_%d: %s\n%s", prog, spec.model_name, spec.arch, spec.sm, spec.knobs,
                usage_text());
    return kExitOk;
  }
  if (!usage_error.empty()) {
    std::fprintf(stderr, "%s: error: %s\n%s", prog, usage_error.c_str(), usage_text());
    return kExitUsage;
  }

  // ---- the model file: mapped, checked against the plan, its vocabulary
  std::optional<GgufFile> gguf;
  std::optional<Tokenizer> tokenizer;
  try {
    gguf.emplace(GgufFile::open(opt.model_path));
  } catch (const std::exception& e) {
    return fail(prog, kExitModel, e.what());
  }
  const std::vector<std::string> diffs = model_differences(*gguf, spec);
  if (!diffs.empty()) {
    std::string msg = opt.model_path + " is not the model this program was planned for (" + spec.model_name +
                      ", fingerprint " + spec.fingerprint + "):";
    for (size_t i = 0; i < diffs.size() && i < 12; ++i) msg += "\n  " + diffs[i];
    if (diffs.size() > 12) msg += "\n  ... and " + std::to_string(diffs.size() - 12) + " more differences";
    return fail(prog, kExitModel, msg);
  }
  std::string tokenizer_error;
  try {
    tokenizer.emplace(Tokenizer::from_vocab(load_vocab(*gguf)));
  } catch (const std::exception& e) {
    tokenizer_error = e.what();
  }

  // ---- the prompt
  std::vector<int32_t> prompt;
  if (opt.has_prompt_tokens) {
    prompt = opt.prompt_tokens;
  } else if (opt.has_prompt) {
    if (!tokenizer) return fail(prog, kExitModel, "cannot tokenize the prompt: " + tokenizer_error);
    try {
      prompt = tokenizer->encode(opt.prompt, /*add_special=*/true, /*parse_special=*/true);
    } catch (const std::exception& e) {
      return fail(prog, kExitPrompt, std::string("cannot tokenize the prompt: ") + e.what());
    }
  } else if (tokenizer && tokenizer->bos_id() >= 0) {
    prompt = {tokenizer->bos_id()};
  }
  if (prompt.empty())
    return fail(prog, kExitPrompt, "the prompt is empty (give -p TEXT or --prompt-tokens \"ID ...\")");
  for (int32_t id : prompt)
    if (id < 0 || id >= spec.n_vocab)
      return fail(prog, kExitPrompt, "prompt token " + std::to_string(id) + " is outside the vocabulary [0, " +
                                         std::to_string(spec.n_vocab) + ")");
  const int n_prompt = static_cast<int>(prompt.size());
  if (n_prompt > spec.n_ctx)
    return fail(prog, kExitPrompt, "the prompt is " + std::to_string(n_prompt) + " tokens; the context holds " +
                                       std::to_string(spec.n_ctx) + " (plan with a larger --max-ctx)");
  // P + n - 1 steps run at positions 0 .. P + n - 2, which must fit the cache.
  int n_generate = std::min(opt.n_predict, spec.n_ctx - n_prompt + 1);
  if (n_generate < opt.n_predict && !opt.quiet)
    std::fprintf(stderr, "%s: note: generating %d tokens, not %d: the context holds %d positions\n", prog, n_generate,
                 opt.n_predict, spec.n_ctx);

  // ---- the GPU
  int n_devices = 0;
  const cudaError_t count_status = cudaGetDeviceCount(&n_devices);
  if (count_status != cudaSuccess || n_devices == 0)
    return fail(prog, kExitGpu, std::string("no CUDA GPU available (") +
                                    (count_status != cudaSuccess ? cudaGetErrorString(count_status) : "0 devices") + ")");
  cudaDeviceProp prop{};
  LANEC_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sm = prop.major * 10 + prop.minor;
  if (sm < spec.sm)
    return fail(prog, kExitGpu, std::string("GPU 0 (") + prop.name + ") is sm_" + std::to_string(sm) +
                                    "; this program was planned and built for sm_" + std::to_string(spec.sm));
  if (sm != spec.sm && !opt.quiet)
    std::fprintf(stderr, "%s: note: GPU 0 (%s) is sm_%d; planned for sm_%d (launch parameters may not suit it)\n",
                 prog, prop.name, sm, spec.sm);
  size_t free_bytes = 0, total_bytes = 0;
  LANEC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  uint64_t staging = 0;
  for (size_t i = 0; i < spec.n_weights; ++i)
    if (spec.weights[i].ggml_type == kGgmlQ8_0) staging = std::max<uint64_t>(staging, spec.weights[i].bytes);
  const uint64_t needed = spec.weight_bytes + spec.buffer_bytes + staging;
  if (needed > free_bytes)
    return fail(prog, kExitGpu, "GPU 0 (" + std::string(prop.name) + ") has " + std::to_string(free_bytes >> 20) +
                                    " MiB free; the program needs " + std::to_string((needed >> 20) + 1) + " MiB");

  // ---- device state: allocations, weights, the captured step
  Device dev;
  dev.ring_capacity = spec.ring_capacity;
  LANEC_CUDA_CHECK(cudaMalloc(&dev.weights, spec.weight_bytes));
  LANEC_CUDA_CHECK(cudaMalloc(&dev.buffers, spec.buffer_bytes));
  LANEC_CUDA_CHECK(cudaMemset(dev.buffers, 0, spec.buffer_bytes));
  dev.slots = spec.bind(dev.weights, dev.buffers);
  upload_weights(*gguf, spec, dev.weights, !opt.quiet);
  // The step runs on a non-blocking stream, which does not wait for the legacy
  // stream's memset and copies above.
  LANEC_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t pinned_count = static_cast<size_t>(n_prompt) + static_cast<size_t>(n_generate) + 1;
  LANEC_CUDA_CHECK(cudaMallocHost(&dev.pinned_tokens, pinned_count * sizeof(int)));
  LANEC_CUDA_CHECK(cudaMallocHost(&dev.ring_host, (static_cast<size_t>(spec.ring_capacity) + 1) * sizeof(int)));
  std::copy(prompt.begin(), prompt.end(), dev.pinned_tokens);
  LANEC_CUDA_CHECK(cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking));
  dev.graph = capture_step(spec, dev.stream, false);
  dev.long_from = long_context_from(spec);
  if (dev.long_from > 0) dev.graph_long = capture_step(spec, dev.stream, true);

  if (opt.bench || opt.profile) {
    if (opt.bench) {
      const int n_decode = std::min(opt.n_predict, spec.n_ctx - n_prompt);
      run_bench(dev, spec, prompt, n_decode, opt.bench_repeats, prop.name);
    }
    if (opt.profile) run_profile(dev, spec, prompt, opt.bench_repeats, prop.name);
    return kExitOk;
  }

  // ---- generation
  const int32_t eos = tokenizer ? tokenizer->eos_id() : -1;
  auto stops = [&](int32_t id) { return !opt.ignore_eos && eos >= 0 && id == eos; };
  TextStream text;
  text.tokenizer = tokenizer ? &*tokenizer : nullptr;
  text.enabled = !opt.print_tokens;
  if (text.enabled && opt.has_prompt) {
    std::fputs(opt.prompt.c_str(), stdout);
    text.flush();
  }
  const bool per_step = opt.temperature > 0.0f || !opt.logits_path.empty();
  std::optional<NpyLogits> logits_dump;
  if (!opt.logits_path.empty()) logits_dump.emplace(spec.n_vocab);
  Sampler sampler(opt.temperature, opt.top_k, opt.top_p, opt.seed);
  std::vector<float> logits;
  std::vector<int32_t> generated;

  cudaEvent_t t0, t1, t2;
  LANEC_CUDA_CHECK(cudaEventCreate(&t0));
  LANEC_CUDA_CHECK(cudaEventCreate(&t1));
  LANEC_CUDA_CHECK(cudaEventCreate(&t2));
  dev.reset();
  LANEC_CUDA_CHECK(cudaEventRecord(t0, dev.stream));
  if (per_step) {
    // One step at a time: the host sees every step's logits.
    const int n_steps = n_prompt + n_generate - 1;
    for (int s = 0; s < n_steps; ++s) {
      if (s < n_prompt) dev.queue_token(static_cast<size_t>(s));
      dev.replay();
      dev.read_logits(logits, spec.n_vocab);
      if (s == n_prompt - 1) LANEC_CUDA_CHECK(cudaEventRecord(t1, dev.stream));
      if (logits_dump) logits_dump->append(logits.data());
      if (s < n_prompt - 1) continue;
      int32_t next;
      if (opt.temperature > 0.0f) {
        next = sampler.sample(logits.data(), spec.n_vocab);
        dev.pinned_tokens[n_prompt + generated.size()] = next;
        dev.queue_token(static_cast<size_t>(n_prompt) + generated.size());
      } else {
        next = dev.read_ring() > s ? dev.ring_token(s) : 0;
      }
      generated.push_back(next);
      text.put(next);
      text.flush();
      if (stops(next)) break;
    }
  } else {
    for (int s = 0; s < n_prompt; ++s) {
      dev.queue_token(static_cast<size_t>(s));
      dev.replay();
    }
    LANEC_CUDA_CHECK(cudaEventRecord(t1, dev.stream));
    int next_index = n_prompt - 1;  // ring index of the next generated token
    int queued = n_prompt;          // steps queued so far
    const int n_steps = n_prompt + n_generate - 1;
    bool stopped = false;
    for (;;) {
      const int count = dev.read_ring();
      for (; next_index < count && static_cast<int>(generated.size()) < n_generate; ++next_index) {
        const int32_t id = dev.ring_token(next_index);
        generated.push_back(id);
        text.put(id);
        if (stops(id)) {
          stopped = true;
          break;
        }
      }
      text.flush();
      if (stopped || static_cast<int>(generated.size()) >= n_generate || queued >= n_steps) break;
      const int batch = std::min({kDrainEvery, n_steps - queued, spec.ring_capacity});
      for (int i = 0; i < batch; ++i) dev.replay();
      queued += batch;
    }
  }
  LANEC_CUDA_CHECK(cudaEventRecord(t2, dev.stream));
  LANEC_CUDA_CHECK(cudaEventSynchronize(t2));
  if (text.enabled) std::printf("\n");

  if (opt.print_tokens) {
    std::printf("prompt:");
    for (int32_t id : prompt) std::printf(" %d", id);
    std::printf("\ngenerated:");
    for (int32_t id : generated) std::printf(" %d", id);
    std::printf("\n");
  }
  if (logits_dump) {
    // One row a step: P + n - 1 rows (the last generated token is never fed back), as lanec ref.
    if (!logits_dump->write(opt.logits_path))
      return fail(prog, kExitOutput, "cannot write logits to " + opt.logits_path);
  }
  if (!opt.quiet) {
    const double prefill_ms = elapsed_ms(t0, t1);
    const double decode_ms = elapsed_ms(t1, t2);
    const int n_decoded = std::max(0, static_cast<int>(generated.size()) - 1);
    std::fprintf(stderr, "prefill: %d tokens in %.2f ms (%.2f ms/token, %.1f tokens/s)\n", n_prompt, prefill_ms,
                 prefill_ms / n_prompt, 1000.0 * n_prompt / prefill_ms);
    if (n_decoded > 0)
      std::fprintf(stderr, "decode:  %d tokens in %.2f ms (%.2f ms/token, %.1f tokens/s)%s\n", n_decoded, decode_ms,
                   decode_ms / n_decoded, 1000.0 * n_decoded / decode_ms,
                   per_step ? " (host reads every step)" : "");
  }
  LANEC_CUDA_CHECK(cudaEventDestroy(t0));
  LANEC_CUDA_CHECK(cudaEventDestroy(t1));
  LANEC_CUDA_CHECK(cudaEventDestroy(t2));
  return kExitOk;
}

}  // namespace lanec::runtime
