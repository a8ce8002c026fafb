#!/usr/bin/env bash
# What each kernel of a CUDA program runs between its PDL wait and its first
# global load: the instructions every launch puts on the chain before any
# data moves. Long-latency ones there cost every launch of the kernel: MUFU
# (a divide's reciprocal, exp, rsqrt), I2F/F2I (an integer division by a
# runtime value), CALL (a divide's slow path), and f64 math.
#   bash bench/wait_sass.sh PROGRAM.cu [ARCH]     (default sm_90)
# e.g. on a program lanec emitted (lanec plan MODEL --knobs K -o p.cu).
# Needs nvcc and cuobjdump (the CUDA toolkit; $CUOBJDUMP overrides), no GPU.
# Prints a table: kernel, each wait's address (a kernel may wait on several
# paths), the instructions from it to the next global load and the
# long-latency ones among them; then those instructions. The scan follows
# the SASS in address order, so both arms of a branch in between count.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sass_env.sh"

awk '
  BEGIN {
    print "| kernel | wait at | instructions from the wait to the first load | long-latency among them |"
    print "| --- | --- | ---: | ---: |"
  }
  function flush() {
    if (!open) return
    printf "| %s | %s | %d | %d |\n", name, at, count, slow
    if (lines != "") details = details "\n" name " (wait at " at "):\n" lines
    open = 0
  }
  /Function :/ { flush(); name = $3; next }
  name == "" || !/\/\*[0-9a-f]+\*\// { next }
  {
    text = $0
    addr = text
    sub(/^[ \t]*\/\*/, "", addr)
    sub(/\*\/.*$/, "", addr)
    sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", text)
    sub(/[ \t]*;.*$/, "", text)
  }
  text ~ /ACQBULK/ { flush(); open = 1; at = "0x" addr; count = 0; slow = 0; lines = ""; next }
  !open || text == "" || text ~ /^NOP/ { next }
  text ~ /(^|[ \t])LDG/ { flush(); next }
  {
    count++
    if (text ~ /MUFU|I2F|F2I|CALL|DMUL|DFMA|DADD/) { slow++; lines = lines "    " text "\n" }
  }
  END {
    flush()
    printf "%s\n", details
  }
' "$work/k.sass" | sed -e 's/_ZN5lanec7kernels//'
