#!/usr/bin/env bash
# Which kernels of a CUDA program issue global loads behind their own global
# stores: where the compiler cannot tell a store's address from a later
# load's, the load waits for the store, and a copy loop that stores each
# element before loading the next pays an L2 or DRAM round trip an element
# (the rope's V rows, the embedding and the argmax's state update did;
# docs/performance.md, h100-2026-12-06d).
#   bash bench/copy_sass.sh PROGRAM.cu [ARCH]     (default sm_90)
# e.g. on a program lanec emitted (lanec plan MODEL --knobs K -o p.cu), or on
# tests/kernels/kernel_sweep.cu for every kernel form.
# Needs nvcc and cuobjdump (the CUDA toolkit; $CUOBJDUMP overrides), no GPU.
# Prints a table: kernel, its global loads (L), stores (S) and waits (|) in
# address order, and how many times a load follows a store. The scan follows
# the SASS in address order, so both arms of a branch count; a kernel worth a
# look shows a run like LSLSLS, not one S before the next path's loads.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sass_env.sh"

awk '
  BEGIN {
    print "| kernel | loads (L), stores (S), waits (|) in address order | loads after a store |"
    print "| --- | --- | ---: |"
  }
  function flush() {
    if (name == "") return
    printf "| %s | %s | %d |\n", name, (length(seq) > 120 ? substr(seq, 1, 117) "..." : seq), after
  }
  /Function :/ { flush(); name = $3; seq = ""; after = 0; last = ""; next }
  / LDG/ { seq = seq "L"; if (last == "S") after++; last = "L"; next }
  / STG/ { seq = seq "S"; last = "S"; next }
  / ACQBULK/ { seq = seq "|"; next }
  END { flush() }
' "$work/k.sass" | sed -e 's/_ZN5lanec7kernels//'
