# Sourced by bench/wait_sass.sh and bench/copy_sass.sh: compiles PROGRAM.cu
# ($1, for ARCH $2, default sm_90) to a cubin and leaves its SASS in
# "$work/k.sass" (a temporary folder removed on exit). Needs nvcc and
# cuobjdump (the CUDA toolkit; $CUOBJDUMP overrides), no GPU.
src="${1:?usage: bash $(basename "$0") PROGRAM.cu [ARCH]}"
arch="${2:-sm_90}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cuobjdump="${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

nvcc -std=c++17 -O3 -arch="$arch" -I"$root" -cubin -o "$work/k.cubin" "$src"
"$cuobjdump" -sass "$work/k.cubin" >"$work/k.sass"
