// What an emitted program tells the runtime about itself (plain C++17): the
// planned weight table the GGUF is checked against, the metadata values the
// plan baked in, the sizes of its two device allocations, its bind() and
// step() functions and the table of step()'s launches (--profile).
// kernels/runtime/program.cuh runs a program from this.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
typedef struct CUstream_st* cudaStream_t;
#endif

namespace lanec::runtime {

// An int8 activation vector (kernels/blocks.h): n int8 values, n/32 f32 scales.
struct Int8Vec {
  int8_t* qs;   // values (the high word of a two-word form)
  float* d;     // one scale per 32 values
  int8_t* lo = nullptr;  // two-word forms (activations: two-pass-int8): the low word
};

// One planned weight: the GGUF tensor it comes from and where it goes.
struct PlannedWeight {
  const char* gguf_name;
  uint32_t ggml_type;   // GgmlType id (Q8_0 = 8 is repacked to q8_0_split at load)
  size_t n_dims;
  int64_t ne[4];        // GGUF order: ne[0] is the contiguous axis
  uint64_t bytes;
  uint64_t offset;      // into the weight allocation (256-byte aligned)
  bool cols = false;    // Q8_0 repacked to q8_0_cols instead (an ffn launch's down weight, kernels/ffn.cuh)
};

// One launch of step(), for --profile: what it is and the bytes it moves as
// the planner sizes its buffers. Bytes a run moves: weight_bytes +
// activation_bytes + cache_bytes_per_position * (positions attention reads).
struct LaunchInfo {
  const char* name;                   // the schedule's launch name ("gemv_qkv_l03")
  const char* kind;                   // kernel family ("gemv")
  const char* ops;                    // step-graph ops covered and rules ("ops 12-14 (gemv_parts)")
  uint64_t weight_bytes;              // weights read (an embedding: one row)
  uint64_t activation_bytes;          // activations, params and workspaces read + written, cache rows written
  uint64_t cache_bytes_per_position;  // KV cache bytes read per cached position (attention)
};

// Times the launches of a step run outside the graph (program.cuh defines it).
class LaunchProfiler;

// A metadata key and its value as gguf_value_summary prints it.
struct PlannedKey {
  const char* key;
  const char* value;
};

// Device pointers of the decode state (the argmax launch advances them).
struct DecodeSlots {
  int* token;             // i32 [1]: the token the next step embeds
  int* pos;               // i32 [1]: its position
  const float* logits;    // f32 [n_vocab]: the last step's logits
  int* ring;              // i32 [ring_capacity]: argmax tokens, appended per step
  int* ring_count;        // i32 [1]: tokens appended so far
};

struct ProgramSpec {
  const char* model_name;
  const char* arch;
  const char* fingerprint;
  const char* knobs;
  int sm;                 // planned compute capability (90 = sm_90)
  const PlannedWeight* weights;
  size_t n_weights;
  uint64_t weight_bytes;
  const PlannedKey* metadata;
  size_t n_metadata;
  uint64_t buffer_bytes;
  int n_vocab;
  int n_ctx;
  int ring_capacity;
  DecodeSlots (*bind)(uint8_t* weight_base, uint8_t* buffer_base);
  // Queues one decode step; with a profiler, marks the end of each launch
  // (the graph captures pass nullptr). long_context: the form of the step
  // for lengths where attention merges several clusters of splits
  // (program.cuh's long_context_from), captured as a second graph.
  void (*step)(cudaStream_t stream, LaunchProfiler* prof, bool long_context);
  const LaunchInfo* launches;         // step()'s launches, in order
  size_t n_launches;
  int max_attention_splits;           // the most context splits of an attention launch
};

}  // namespace lanec::runtime
