#!/usr/bin/env bash
# Builds and runs the GPU numerics sweep of the kernel library
# (tests/kernels/kernel_sweep.cu) on a machine with an NVIDIA GPU.
#   scripts/kernel_sweep.sh [--seed N] [--only FAMILY]
# Env: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
#      LANEC_SM (default: the first GPU's compute capability, e.g. 90),
#      LANEC_SWEEP_BIN (default: build/kernel_sweep),
#      LANEC_SWEEP_FLAGS (extra nvcc flags, e.g. a kernel switch: -DLANEC_GEMV_ROW_LOOP=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
sm="${LANEC_SM:-}"
if [[ -z "$sm" ]] && command -v nvidia-smi >/dev/null; then
  sm="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')"
fi
sm="${sm:-80}"
bin="${LANEC_SWEEP_BIN:-$root/build/kernel_sweep}"
mkdir -p "$(dirname "$bin")"
echo "building $bin for sm_$sm with $nvcc"
"$nvcc" -std=c++17 -O2 -arch="sm_$sm" -Xcompiler -Wall -Xcompiler -Wextra -I"$root" \
  ${LANEC_SWEEP_FLAGS:-} "$root/tests/kernels/kernel_sweep.cu" -o "$bin"
"$bin" "$@"
