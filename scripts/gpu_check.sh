#!/usr/bin/env bash
# The GPU check, run on the GPU machine in one call (it has nvcc, cmake and
# python3 with torch/transformers, but no Debian -dev packages and no network):
#
#   run(carry=[".deps/debs", ".deps/whl"], command="bash scripts/gpu_check.sh [STAGE ...]")
#
# Stages (all by default, in this order):
#   build        build lanec and the tests with the carried dependencies, run the unit tests
#   kernels      the kernel library's shape sweep against its CPU references
#   transformers the CPU reference executor against Hugging Face transformers
#   programs     plan, emit, build and run the generated programs; compare with the reference
#   sanitizer    compute-sanitizer memcheck and racecheck on tiny programs
# A summary table is printed at the end and written to $OUT/gpu_check.md when $OUT is set.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/device_env.sh
WORK="${GPU_CHECK_WORK:-/tmp/lanec-gpu-check}"
mkdir -p "$WORK"
JOBS="$(nproc)"
LANEC="$ROOT/build/lanec"
SUMMARY="$WORK/summary.md"
: >"$SUMMARY"
FAILED=0

note() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
stage() { printf '\n===== %s =====\n' "$*"; }
check() {  # check NAME COMMAND...: runs, records pass/fail in the summary
  local name="$1"; shift
  local log="$WORK/log_${name//[^A-Za-z0-9_.-]/_}.txt"
  local start end
  start=$(date +%s.%N)
  if "$@" >"$log" 2>&1; then
    end=$(date +%s.%N)
    note "| $name | pass | $(printf '%.1f' "$(echo "$end - $start" | bc)") s | $(tail -n 1 "$log" | tr '|' '/') |"
  else
    end=$(date +%s.%N)
    FAILED=$((FAILED + 1))
    note "| $name | FAIL | $(printf '%.1f' "$(echo "$end - $start" | bc)") s | $(tail -n 1 "$log" | tr '|' '/') |"
    echo "---- $name failed; last lines of $log:"; tail -n 30 "$log"
  fi
}

stage_build() {
  stage build
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $LANEC_CMAKE_ARGS >/dev/null &&
    cmake --build build -j "$JOBS" 2>&1 | grep -E "error|warning" || true
  check unit_tests ./build/tests/lanec_tests
}

stage_kernels() {
  stage kernels
  check kernel_sweep bash scripts/kernel_sweep.sh
}

stage_transformers() {
  stage transformers
  python3 -m pip install -q --no-index --no-deps --target "$WORK/site" .deps/whl/*.whl &&
    export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
  for preset in llama-tiny qwen2-tiny qwen3-tiny; do
    "$LANEC" synth "$preset" --type f32 --seed 11 -o "$WORK/$preset-f32.gguf" >/dev/null 2>&1
    check "transformers_$preset" python3 scripts/compare_transformers.py \
      --lanec "$LANEC" --gguf "$WORK/$preset-f32.gguf"
  done
}

main() {
  local stages=("$@")
  ((${#stages[@]})) || stages=(build kernels transformers programs sanitizer)
  note "| check | result | time | last line |"
  note "| --- | --- | --- | --- |"
  for s in "${stages[@]}"; do
    if declare -F "stage_$s" >/dev/null; then "stage_$s"; else note "| $s | FAIL | 0 s | unknown stage |"; FAILED=$((FAILED+1)); fi
  done
  echo; echo "===== summary ====="; cat "$SUMMARY"
  [[ -n "${OUT:-}" ]] && cp "$SUMMARY" "$OUT/gpu_check.md"
  echo "$FAILED stage checks failed"
  ((FAILED == 0))
}

main "$@"
