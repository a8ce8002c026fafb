// Elementwise ops on f32 vectors: out = silu(a) * b (SwiGLU, a = gate, b = up)
// and out = a + b (residual add). out may alias a or b.
#pragma once

#include "common.cuh"

namespace lanec::kernels {

enum class ElementwiseOp { swiglu, add };

struct ElementwiseParams {
  const float* a;  // [n]
  const float* b;  // [n]
  float* out;      // [n]
  int n;
};

// Thread mapping: one thread per element, grid covers n (coalesced).
constexpr int kElementwiseThreads = 256;

template <ElementwiseOp Op>
__global__ void __launch_bounds__(kElementwiseThreads) elementwise_kernel(const __grid_constant__ ElementwiseParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  if constexpr (Op == ElementwiseOp::swiglu) {
    p.out[i] = silu(p.a[i]) * p.b[i];
  } else {
    p.out[i] = p.a[i] + p.b[i];
  }
}

template <ElementwiseOp Op>
cudaError_t launch_elementwise(const ElementwiseParams& p, cudaStream_t stream) {
  if (p.n <= 0) return invalid_launch();
  return launch_kernel(elementwise_kernel<Op>, static_cast<unsigned>(ceil_div(p.n, kElementwiseThreads)),
                       kElementwiseThreads, 0, stream, p);
}

}  // namespace lanec::kernels
