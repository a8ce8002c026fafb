#!/usr/bin/env bash
# The GPU check, run on the GPU machine in one call (it has nvcc, cmake and
# python3 with torch/transformers, but no Debian -dev packages and no network):
#
#   bash scripts/gpu_check.sh [STAGE ...]
# with the working tree and .deps/debs, .deps/whl (scripts/fetch_device_deps.sh) copied there.
#
# Stages (default: build programs bench transformers sanitizer; kernels on request):
#   build        build lanec and the tests with the carried dependencies, run the unit tests
#   kernels      the kernel library's shape sweep against its CPU references
#   transformers the CPU reference executor against Hugging Face transformers
#   programs     plan, emit, build and run the generated programs; compare with the reference
#   sanitizer    compute-sanitizer memcheck and racecheck on tiny programs
#   bench        bench/run_bench.sh: decode speed of Qwen3 0.6B/1.7B/8B Q8_0 against the roofline
# A summary table is printed at the end and written to $OUT/gpu_check.md when $OUT is set.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/device_env.sh
WORK="${GPU_CHECK_WORK:-/tmp/lanec-gpu-check}"
mkdir -p "$WORK"
JOBS="$(nproc)"
LANEC="$ROOT/build/lanec"
SUMMARY="${OUT:-$WORK}/gpu_check.md"  # written as it goes: a run cut short still reports
: >"$SUMMARY"
FAILED=0

note() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
stage() { printf '\n===== %s =====\n' "$*"; }
check() {  # check NAME COMMAND...: runs (functions too), records pass/fail in the summary
  local name="$1"; shift
  local log="$WORK/log_${name//[^A-Za-z0-9_.-]/_}.txt"
  local start=$SECONDS result=pass
  timeout "${CHECK_TIMEOUT:-300}" bash -c '"$@"' check "$@" >"$log" 2>&1 || result=FAIL
  note "| $name | $result | $((SECONDS - start)) s | $(tail -n 1 "$log" | tr '|' '/') |"
  if [[ $result == FAIL ]]; then
    FAILED=$((FAILED + 1))
    echo "---- $name failed; last lines of $log:"; tail -n 30 "$log"
  fi
}

stage_build() {
  stage build
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $LANEC_CMAKE_ARGS >/dev/null &&
    cmake --build build -j "$JOBS" --target lanec 2>&1 | grep -E "error|warning" || true
  [[ -x "$LANEC" ]] || { note "| build | FAIL | | lanec did not build |"; exit 1; }
  note "| build | pass | | lanec built |"
}

stage_kernels() {
  stage kernels
  check kernel_sweep bash scripts/kernel_sweep.sh
}

stage_transformers() {
  stage transformers
  python3 -m pip install -q --no-index --no-deps --target "$WORK/site" .deps/whl/*.whl &&
    export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
  check transformers_tiny python3 scripts/compare_transformers.py --lanec "$LANEC" --tiny \
    --workdir "$WORK/transformers"
}

random_ids() {  # random_ids COUNT VOCAB SEED
  python3 -c "import random,sys; r=random.Random(int(sys.argv[3])); print(' '.join(str(r.randrange(int(sys.argv[2]))) for _ in range(int(sys.argv[1]))))" "$@"
}

# Knob file variants: the samples, and h200 with an f32 cache for the exact check.
make_knob_variants() {
  mkdir -p "$WORK/knobs"
  cp samples/knobs/*.yaml "$WORK/knobs/"
  sed -e 's/^cache_precision:.*/cache_precision: f32/' -e 's/^activations:.*/activations: dequant/' \
    samples/knobs/h200.yaml >"$WORK/knobs/h200-exact.yaml"
}

# One program: plan, emit and build it (in parallel with others).
build_case() {  # build_case NAME MODEL KNOBS
  "$LANEC" plan "$2" --knobs "$3" --max-ctx 1024 -o "$WORK/prog/$1.cu" --build \
    >"$WORK/prog/$1.build.log" 2>&1 || echo "build failed: $1" >>"$WORK/prog/build_failures"
}

# Exact: 16 prompt tokens then 32 greedy tokens; program and reference must agree.
exact_case() {  # exact_case NAME MODEL
  local name="$1" model="$2" prompt
  prompt="$(random_ids 16 "$(vocab_of "$model")" 5)"
  "$WORK/prog/$name" "$model" --prompt-tokens "$prompt" -n 32 --ignore-eos --quiet --tokens \
    --logits "$WORK/prog/$name.prog.npy" &&
    "$LANEC" ref "$model" --tokens "$prompt" -n 32 --logits "$WORK/prog/$name.ref.npy" -j "$JOBS" >/dev/null &&
    python3 scripts/compare_logits.py --mode exact --rtol 1e-3 --tokens 32 \
      --program "$WORK/prog/$name.prog.npy" --reference "$WORK/prog/$name.ref.npy"
}

# Int8 numerics: 256 prompt tokens teacher-force both sides; top-1 agreement >= 99 %.
top1_case() {  # top1_case NAME MODEL
  local name="$1" model="$2" prompt
  prompt="$(random_ids 256 "$(vocab_of "$model")" 9)"
  "$WORK/prog/$name" "$model" --prompt-tokens "$prompt" -n 1 --ignore-eos --quiet \
    --logits "$WORK/prog/$name.prog.npy" >/dev/null &&
    "$LANEC" ref "$model" --tokens "$prompt" -n 1 --logits "$WORK/prog/$name.ref.npy" -j "$JOBS" >/dev/null &&
    python3 scripts/compare_logits.py --mode top1 --min-top1 0.99 \
      --program "$WORK/prog/$name.prog.npy" --reference "$WORK/prog/$name.ref.npy"
}

vocab_of() { "$LANEC" info "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['hyperparameters']['vocab_size'])"; }
export -f random_ids vocab_of exact_case top1_case
export LANEC WORK JOBS

stage_programs() {
  stage programs
  mkdir -p "$WORK/prog" "$WORK/models"
  rm -f "$WORK/prog/build_failures"
  make_knob_variants
  local cases=()  # "NAME MODEL KNOBS MODE"
  local presets=(llama-tiny qwen2-tiny qwen3-tiny) knob_files=(h200 h100 a100 rtx4090 l4)
  local exact_types=(f32 f16)
  # Quick: every architecture, one knob file, f32 exact only, no 0.6B model.
  if [[ -n "${GPU_CHECK_QUICK:-}" ]]; then knob_files=(h200); exact_types=(f32); fi
  for preset in "${presets[@]}"; do
    for type in f32 f16 q8_0; do
      "$LANEC" synth "$preset" --type "$type" --seed 21 -o "$WORK/models/$preset-$type.gguf" 2>/dev/null
    done
    for type in "${exact_types[@]}"; do cases+=("$preset-$type-exact $WORK/models/$preset-$type.gguf $WORK/knobs/h200-exact.yaml exact"); done
    for knobs in "${knob_files[@]}"; do
      cases+=("$preset-q8_0-$knobs $WORK/models/$preset-q8_0.gguf $WORK/knobs/$knobs.yaml top1")
    done
  done
  if [[ -z "${GPU_CHECK_QUICK:-}" ]]; then
    "$LANEC" synth qwen3-0.6b --type q8_0 --seed 21 --vocab tests/data/vocab/qwen3-vocab.gguf \
      -o "$WORK/models/qwen3-0.6b-q8_0.gguf" 2>/dev/null
    cases+=("qwen3-0.6b-q8_0-h200 $WORK/models/qwen3-0.6b-q8_0.gguf $WORK/knobs/h200.yaml top1")
  fi
  local c
  for c in "${cases[@]}"; do
    set -- $c
    build_case "$1" "$2" "$3" &
    while (($(jobs -r | wc -l) >= JOBS)); do sleep 0.2; done
  done
  wait
  [[ -f "$WORK/prog/build_failures" ]] && cat "$WORK/prog/build_failures"
  for c in "${cases[@]}"; do
    set -- $c
    check "program_$1" "${4}_case" "$1" "$2"
  done
  # The generated program end to end on text, with the real vocabulary.
  [[ -n "${GPU_CHECK_QUICK:-}" ]] && return
  check program_text_qwen3-0.6b "$WORK/prog/qwen3-0.6b-q8_0-h200" "$WORK/models/qwen3-0.6b-q8_0.gguf" \
    -p "The capital of France is" -n 16
}

stage_sanitizer() {
  stage sanitizer
  local prog="$WORK/prog/qwen3-tiny-q8_0-h200" model="$WORK/models/qwen3-tiny-q8_0.gguf"
  check sanitizer_memcheck compute-sanitizer --tool memcheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "1 2 3" -n 4 --quiet
  check sanitizer_racecheck compute-sanitizer --tool racecheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "1 2 3" -n 4 --quiet
}

stage_bench() {
  stage bench
  check bench bash bench/run_bench.sh
}

main() {
  local stages=("$@")
  ((${#stages[@]})) || stages=(build programs bench transformers sanitizer)
  note "| check | result | time | last line |"
  note "| --- | --- | --- | --- |"
  for s in "${stages[@]}"; do
    if declare -F "stage_$s" >/dev/null; then "stage_$s"; else note "| $s | FAIL | 0 s | unknown stage |"; FAILED=$((FAILED+1)); fi
  done
  echo; echo "===== summary ====="; cat "$SUMMARY"
  echo "$FAILED stage checks failed"
  ((FAILED == 0))
}

main "$@"
