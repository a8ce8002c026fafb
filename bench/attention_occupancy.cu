// How many attention blocks and clusters the GPU holds at once, for the
// kernels the Qwen3 shapes launch at long contexts (head_dim 128, f16 cache,
// clusters of 8 splits): the scalar key loop at 2 and 4 heads a block, and
// the tensor-core loop (kernels/attention_tc.cuh), whose splits
// launch_attention caps to one wave of clusters. A grid of more clusters
// than the GPU holds runs its last ones in a second wave.
//   nvcc -std=c++17 -O2 -arch=sm_90 bench/attention_occupancy.cu -o attention_occupancy && ./attention_occupancy
#include <cstdio>

#include "../kernels/attention.cuh"

using lanec::kernels::AttentionParams;
using lanec::kernels::CachePrecision;

namespace {

template <int Group, bool Tc>
void report(int n_groups, int n_split) {
  namespace k = lanec::kernels;
  auto kernel = k::attention_cluster_kernel<128, CachePrecision::f16, Group, Tc>;
  const int clusters = k::max_active_clusters(kernel, dim3(n_groups, n_split), dim3(k::kAttnThreads),
                                              dim3(1, k::kAttnClusterSplits, 1));
  int blocks = 0;
  LANEC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, k::kAttnThreads, 0));
  cudaFuncAttributes fa = {};
  LANEC_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  const int needed = n_groups * n_split / k::kAttnClusterSplits;
  std::printf("| %d | %s | %d | %d | %zu | %d | %d of %d |\n", Group, Tc ? "tensor cores" : "scalar", fa.numRegs,
              blocks, fa.localSizeBytes, clusters, needed, n_split);
}

}  // namespace

int main() {
  if (!lanec::kernels::cluster_launches_enabled()) {
    std::printf("attention_occupancy: needs an sm_90 device\n");
    return 1;
  }
  std::printf("| heads a block | key loop | registers | blocks an SM | local bytes | clusters at once |"
              " clusters of 8 head groups (of splits) |\n| ---: | --- | ---: | ---: | ---: | ---: | --- |\n");
  report<2, false>(8, 64);
  report<4, false>(8, 64);
  report<4, true>(8, 64);
  std::printf("tensor-core form's splits (attention_tc_wave_splits, 8 head groups): %d\n",
              lanec::kernels::attention_tc_wave_splits<128, CachePrecision::f16, 4>(dim3(8, 64)));
  return 0;
}
