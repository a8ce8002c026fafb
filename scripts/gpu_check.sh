#!/usr/bin/env bash
# The GPU check, run on the GPU machine in one call (it has nvcc, cmake and
# python3 with torch/transformers, but no Debian -dev packages and no network):
#
#   bash scripts/gpu_check.sh [STAGE ...]
# with the working tree and .deps/debs, .deps/whl (scripts/fetch_device_deps.sh) copied there.
#
# Stages (default: build programs holds bench transformers sanitizer; kernels on request):
#   build        build lanec with the carried dependencies (the unit tests are CI's)
#   kernels      the kernel library's shape sweep against its CPU references
#   transformers the CPU reference executor against Hugging Face transformers
#   programs     plan, emit, build and run the generated programs; compare with the reference:
#                f32/f16 weights exact against `lanec ref`, Q8_0 int8 against `lanec ref --knobs`
#                (same planned numerics; the cost of int8 against the f32 reference is reported)
#   holds        every rule that fires for a tiny preset held alone: the same comparisons
#   sanitizer    compute-sanitizer memcheck and racecheck on the tiny qwen3 program (built by programs)
#                and on the kernel sweep's tensor-core attention and ahead GEMV families
#                (--only attention_tc, --only gemv_ahead)
#   bench        bench/run_bench.sh: decode speed of Qwen3 0.6B/1.7B/8B Q8_0 against the roofline
# A summary table is printed at the end and written to $OUT/gpu_check.md when $OUT is set.
# Env: GPU_CHECK_QUICK=1 (programs: h200 knobs and f32 exact only, no 0.6B);
#      GPU_CHECK_ONLY=REGEX (programs: only the cases whose name matches, e.g. qwen3-0.6b-q8_0-h200$).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/device_env.sh || { echo "gpu_check: no dependencies to build with (above)" >&2; exit 1; }
WORK="${GPU_CHECK_WORK:-/tmp/lanec-gpu-check}"
mkdir -p "$WORK"
JOBS="$(nproc)"
LANEC="$ROOT/build/lanec"
SUMMARY="${OUT:-$WORK}/gpu_check.md"  # written as it goes: a run cut short still reports
mkdir -p "$(dirname "$SUMMARY")"
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
  local log="$WORK/log_build.txt"
  # A failed build fails the stage even where an older build/lanec is left.
  if cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $LANEC_CMAKE_ARGS >"$log" 2>&1 &&
    cmake --build build -j "$JOBS" --target lanec >>"$log" 2>&1; then
    grep -E "warning" "$log" | head -20
    note "| build | pass | | lanec built |"
  else
    grep -E "error" "$log" | head -20
    note "| build | FAIL | | $(tail -n 1 "$log" | tr '|' '/') |"
    exit 1
  fi
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
  # The opt-in faster numerics (the samples take two-pass-int8).
  sed -e 's/^activations:.*/activations: int8/' samples/knobs/h200.yaml >"$WORK/knobs/h200-one-word.yaml"
  # The H200 knobs on one SM: the tiny presets' FFN blocks then fill the
  # chip, so ffn_fused (and the row loop) fire on them too.
  sed -e 's/sms: [0-9]*/sms: 1/' samples/knobs/h200.yaml >"$WORK/knobs/h200-one-sm.yaml"
}

# One program: plan, emit and build it (in parallel with others).
build_case() {  # build_case PROGRAM MODEL KNOBS [HOLD]: writes PROGRAM.cu and PROGRAM
  "$LANEC" plan "$2" --knobs "$3" ${4:+--hold "$4"} --max-ctx 1024 -o "$1.cu" --build \
    >"$1.build.log" 2>&1 || echo "build failed: $1" >>"$(dirname "$1")/build_failures"
}

# Builds every "PROGRAM MODEL KNOBS [HOLD]" line of stdin, JOBS at a time.
build_all() {
  local line
  while read -r line; do
    build_case $line &
    while (($(jobs -r | wc -l) >= JOBS)); do sleep 0.2; done
  done
  wait
}

# Exact: 16 prompt tokens then 32 greedy tokens; program and plain `lanec ref`
# (f32) must agree.
exact_case() {  # exact_case NAME MODEL [PROGRAM]
  local model="$2" prog="${3:-$WORK/prog/$1}" prompt
  prompt="$(random_ids 16 "$(vocab_of "$model")" 5)"
  "$prog" "$model" --prompt-tokens "$prompt" -n 32 --ignore-eos --quiet --tokens \
    --logits "$prog.prog.npy" &&
    "$LANEC" ref "$model" --tokens "$prompt" -n 32 --logits "$prog.ref.npy" -j "$JOBS" >/dev/null &&
    python3 scripts/compare_logits.py --mode exact --rtol 1e-3 --tokens 32 \
      --program "$prog.prog.npy" --reference "$prog.ref.npy"
}

# The teacher-forced runs: 256 prompt ids (seed 9) for a model, the
# program's logits for them, and plain `lanec ref` (f32) on them, computed
# once per model (the knob files, holds and numerics share it).
top1_prompt() { random_ids 256 "$(vocab_of "$1")" 9; }
program_logits() {  # program_logits PROGRAM MODEL PROMPT -> PROGRAM.prog.npy
  "$1" "$2" --prompt-tokens "$3" -n 1 --ignore-eos --quiet --logits "$1.prog.npy" >/dev/null
}
f32_logits() {  # f32_logits MODEL PROMPT -> prints the cached .npy path
  local out="$1.top1-f32.npy"
  [[ -s $out && $out -nt $1 ]] || "$LANEC" ref "$1" --tokens "$2" -n 1 --logits "$out" -j "$JOBS" >/dev/null || return 1
  echo "$out"
}

# Int8 numerics: gated against `lanec ref --knobs` with the same knob file and
# held rules (the planned numerics on the CPU): top-1 >= TOP1_MIN (0.99 by
# default) and the worst row's error <= INT8_MAX_REL (docs/device.md says why).
# Without a hold the cost of int8 is reported too: top-1 and error against
# plain `lanec ref` (f32), not gated.
INT8_MAX_REL=5e-2
top1_case() {  # top1_case NAME MODEL KNOBS [HOLD [PROGRAM]]
  local model="$2" knobs="$3" hold="${4:-}" prog="${5:-$WORK/prog/$1}" prompt f32
  local f32_ref=()
  prompt="$(top1_prompt "$model")"
  program_logits "$prog" "$model" "$prompt" || return 1
  "$LANEC" ref "$model" --knobs "$knobs" ${hold:+--hold "$hold"} --tokens "$prompt" -n 1 \
    --logits "$prog.planned.npy" -j "$JOBS" >/dev/null || return 1
  if [[ -z $hold ]]; then
    f32="$(f32_logits "$model" "$prompt")" || return 1
    f32_ref=(--f32-reference "$f32")
  fi
  python3 scripts/compare_logits.py --mode top1 --min-top1 "${TOP1_MIN:-0.99}" --max-rel "$INT8_MAX_REL" \
    --program "$prog.prog.npy" --reference "$prog.planned.npy" "${f32_ref[@]}"
}

# Two-word int8 activations (two-pass-int8) come close to f32 activations:
# gated against plain `lanec ref` (f32) directly, top-1 >= 99 % and every row
# within TWO_PASS_MAX_REL of its largest logit (the CPU schedule executor
# gives ~1e-4 on qwen3-tiny, docs/planner.md).
TWO_PASS_MAX_REL=5e-3
top1_f32_case() {  # top1_f32_case NAME MODEL
  local model="$2" prog="$WORK/prog/$1" prompt f32
  prompt="$(top1_prompt "$model")"
  program_logits "$prog" "$model" "$prompt" || return 1
  f32="$(f32_logits "$model" "$prompt")" || return 1
  python3 scripts/compare_logits.py --mode top1 --min-top1 0.99 --max-rel "$TWO_PASS_MAX_REL" \
    --program "$prog.prog.npy" --reference "$f32"
}

# One held rule on one tiny preset: f16 weights under dequant numerics exact
# against plain `lanec ref`, Q8_0 weights with int8 against `ref --knobs --hold`.
hold_case() {  # hold_case PRESET RULE
  local preset="$1" rule="$2" base="$WORK/holds/$1-$2" exact top1 rc=0
  exact="$(exact_case "$preset-f16" "$WORK/models/$preset-f16.gguf" "$base-f16" 2>&1)" || rc=1
  top1="$(top1_case "$preset-q8_0" "$WORK/models/$preset-q8_0.gguf" "$WORK/knobs/h200.yaml" "$rule" \
    "$base-q8_0" 2>&1)" || rc=1
  printf '%s\n%s\n' "$exact" "$top1"
  echo "held $rule: f16 ${exact##*$'\n'}; q8_0 ${top1##*$'\n'}"
  return "$rc"
}

vocab_of() { "$LANEC" info "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['hyperparameters']['vocab_size'])"; }
# The rules that fire for a model under a knob file, one per line.
fired_rules() {  # fired_rules MODEL KNOBS
  "$LANEC" plan "$1" --knobs "$2" --max-ctx 1024 --json |
    python3 -c "import json,sys; print('\n'.join(r['rule'] for r in json.load(sys.stdin)['rules'] if r['fired'] > 0))"
}
export -f random_ids vocab_of top1_prompt program_logits f32_logits exact_case top1_case top1_f32_case hold_case
export LANEC WORK JOBS INT8_MAX_REL TWO_PASS_MAX_REL

TINY_PRESETS=(llama-tiny qwen2-tiny qwen3-tiny)
TINY_MODELS_MADE=""
synth_tiny_models() {  # once per run (programs and holds share them)
  [[ -n $TINY_MODELS_MADE ]] && return
  mkdir -p "$WORK/models"
  local preset type
  for preset in "${TINY_PRESETS[@]}"; do
    for type in f32 f16 q8_0; do
      "$LANEC" synth "$preset" --type "$type" --seed 21 -o "$WORK/models/$preset-$type.gguf" 2>/dev/null
    done
  done
  TINY_MODELS_MADE=1
}

stage_programs() {
  stage programs
  mkdir -p "$WORK/prog"
  rm -f "$WORK/prog/build_failures"
  make_knob_variants
  synth_tiny_models
  local cases=()  # "NAME MODEL KNOBS MODE [HOLD]" (HOLD: planned and compared with that rule held; top1 modes)
  local knob_files=(h200 h100 a100 rtx4090 l4)
  local exact_types=(f32 f16)
  # Quick: every architecture, one knob file, f32 exact only, no 0.6B model.
  if [[ -n "${GPU_CHECK_QUICK:-}" ]]; then knob_files=(h200); exact_types=(f32); fi
  for preset in "${TINY_PRESETS[@]}"; do
    for type in "${exact_types[@]}"; do cases+=("$preset-$type-exact $WORK/models/$preset-$type.gguf $WORK/knobs/h200-exact.yaml exact"); done
    for knobs in "${knob_files[@]}"; do
      cases+=("$preset-q8_0-$knobs $WORK/models/$preset-q8_0.gguf $WORK/knobs/$knobs.yaml top1")
    done
    cases+=("$preset-q8_0-h200-vs-f32 $WORK/models/$preset-q8_0.gguf $WORK/knobs/h200.yaml top1-f32")
    cases+=("$preset-q8_0-one-word $WORK/models/$preset-q8_0.gguf $WORK/knobs/h200-one-word.yaml top1")
    cases+=("$preset-q8_0-one-sm $WORK/models/$preset-q8_0.gguf $WORK/knobs/h200-one-sm.yaml top1")
  done
  if [[ -z "${GPU_CHECK_QUICK:-}" ]]; then
    "$LANEC" synth qwen3-0.6b --type q8_0 --seed 21 --vocab tests/data/vocab/qwen3-vocab.gguf \
      -o "$WORK/models/qwen3-0.6b-q8_0.gguf" 2>/dev/null
    cases+=("qwen3-0.6b-q8_0-h200 $WORK/models/qwen3-0.6b-q8_0.gguf $WORK/knobs/h200.yaml top1-deep")
    cases+=("qwen3-0.6b-q8_0-h200-vs-f32 $WORK/models/qwen3-0.6b-q8_0.gguf $WORK/knobs/h200.yaml top1-f32")
    # Two layers at Qwen3-1.7B's widths: load_ahead takes the output
    # projections at split 2; with it held, staged_weights stages them (the
    # tiny shapes never stage).
    "$LANEC" synth qwen3-1.7b --layers 2 --type q8_0 --seed 21 --vocab tests/data/vocab/qwen3-vocab.gguf \
      -o "$WORK/models/qwen3-1.7b-2l-q8_0.gguf" 2>/dev/null
    cases+=("qwen3-1.7b-2l-q8_0-h200 $WORK/models/qwen3-1.7b-2l-q8_0.gguf $WORK/knobs/h200.yaml top1-deep")
    cases+=("qwen3-1.7b-2l-q8_0-h200-staged $WORK/models/qwen3-1.7b-2l-q8_0.gguf $WORK/knobs/h200.yaml top1-deep load_ahead")
    # One-word int8 over 28 random layers: its agreement is reported, not
    # gated (docs/reference.md: no CPU reference tracks it that deep).
    cases+=("qwen3-0.6b-q8_0-one-word $WORK/models/qwen3-0.6b-q8_0.gguf $WORK/knobs/h200-one-word.yaml top1-report")
  fi
  local c
  if [[ -n "${GPU_CHECK_ONLY:-}" ]]; then  # only the cases whose name matches this pattern
    local kept=()
    for c in "${cases[@]}"; do [[ ${c%% *} =~ $GPU_CHECK_ONLY ]] && kept+=("$c"); done
    cases=("${kept[@]}")
  fi
  for c in "${cases[@]}"; do
    set -- $c
    echo "$WORK/prog/$1 $2 $3 ${5:-}"
  done | build_all
  [[ -f "$WORK/prog/build_failures" ]] && cat "$WORK/prog/build_failures"
  for c in "${cases[@]}"; do
    set -- $c
    case "$4" in
      exact) check "program_$1" exact_case "$1" "$2" ;;
      top1) check "program_$1" top1_case "$1" "$2" "$3" "${5:-}" ;;
      # 28 layers: 256 steps of the planned reference on the CPU take up to ~2 minutes.
      top1-deep) CHECK_TIMEOUT=600 check "program_$1" top1_case "$1" "$2" "$3" "${5:-}" ;;
      top1-report) TOP1_MIN=0 CHECK_TIMEOUT=600 check "program_$1(reported)" top1_case "$1" "$2" "$3" "${5:-}" ;;
      top1-f32) CHECK_TIMEOUT=600 check "program_$1" top1_f32_case "$1" "$2" ;;
    esac
  done
  # The generated program end to end on text, with the real vocabulary
  # (when the 0.6B program was among the cases).
  [[ -n "${GPU_CHECK_QUICK:-}" ]] && return
  [[ -n "${GPU_CHECK_ONLY:-}" && ! qwen3-0.6b-q8_0-h200 =~ $GPU_CHECK_ONLY ]] && return
  check program_text_qwen3-0.6b "$WORK/prog/qwen3-0.6b-q8_0-h200" "$WORK/models/qwen3-0.6b-q8_0.gguf" \
    -p "The capital of France is" -n 16
}

# Every rule that fires for a tiny preset, held alone: the plan without it must
# still be right. f16 weights are planned under h200-exact (h200 with dequant
# numerics and an f32 cache), Q8_0 weights under h200 (int8, f16 cache).
stage_holds() {
  stage holds
  mkdir -p "$WORK/holds"
  rm -f "$WORK/holds/build_failures"
  make_knob_variants
  synth_tiny_models
  local cases=() preset rule
  for preset in "${TINY_PRESETS[@]}"; do
    for rule in $({ fired_rules "$WORK/models/$preset-f16.gguf" "$WORK/knobs/h200-exact.yaml"
                    fired_rules "$WORK/models/$preset-q8_0.gguf" "$WORK/knobs/h200.yaml"; } | sort -u); do
      cases+=("$preset $rule")
    done
  done
  if ((${#cases[@]} == 0)); then
    note "| holds | FAIL | | no fired rules read from lanec plan --json |"
    FAILED=$((FAILED + 1))
    return
  fi
  local c
  for c in "${cases[@]}"; do
    set -- $c
    echo "$WORK/holds/$1-$2-f16 $WORK/models/$1-f16.gguf $WORK/knobs/h200-exact.yaml $2"
    echo "$WORK/holds/$1-$2-q8_0 $WORK/models/$1-q8_0.gguf $WORK/knobs/h200.yaml $2"
  done | build_all
  [[ -f "$WORK/holds/build_failures" ]] && cat "$WORK/holds/build_failures"
  for c in "${cases[@]}"; do
    set -- $c
    check "hold_$1_$2" hold_case "$1" "$2"
  done
}

# Kernels no tiny program takes: the tensor-core attention loop (Qwen3-8B's
# long-context form) and the ahead GEMV (0.6B's widths): the kernel
# sweep's families of their shapes, each run plain, then (where that
# passed) under memcheck and racecheck.
sanitize_sweep_parts() {
  local sweep="$WORK/kernel_sweep" failed_before family
  check sweep_build env LANEC_SWEEP_BIN="$sweep" bash scripts/kernel_sweep.sh --only embed
  [[ -x $sweep ]] || return 0
  for family in attention_tc gemv_ahead; do
    failed_before=$FAILED
    check "sweep_$family" "$sweep" --only "$family"
    ((FAILED == failed_before)) || continue
    check "sanitizer_memcheck_$family" compute-sanitizer --tool memcheck --error-exitcode 1 "$sweep" --only "$family"
    check "sanitizer_racecheck_$family" compute-sanitizer --tool racecheck --error-exitcode 1 "$sweep" --only "$family"
  done
}

stage_sanitizer() {
  stage sanitizer
  sanitize_sweep_parts
  local prog="$WORK/prog/qwen3-tiny-q8_0-h200" model="$WORK/models/qwen3-tiny-q8_0.gguf"
  if [[ ! -x $prog ]]; then  # built by the programs stage of this run or an earlier one
    note "| sanitizer | FAIL | 0 s | no $prog: run the programs stage first (GPU_CHECK_ONLY='qwen3-tiny-q8_0-h200\$' is enough) |"
    FAILED=$((FAILED + 1))
    return
  fi
  check sanitizer_memcheck compute-sanitizer --tool memcheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "1 2 3" -n 4 --quiet
  check sanitizer_racecheck compute-sanitizer --tool racecheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "1 2 3" -n 4 --quiet
  # Past 128 positions: the long-context graph, whose attention clusters
  # leave their merge to a launch of its own.
  local long_prompt
  long_prompt="$(random_ids 140 "$(vocab_of "$model")" 5)"
  check sanitizer_memcheck_long compute-sanitizer --tool memcheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "$long_prompt" -n 4 --quiet
  check sanitizer_racecheck_long compute-sanitizer --tool racecheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "$long_prompt" -n 4 --quiet
  # The staged GEMV (bulk copies into shared memory) where the programs stage built it.
  prog="$WORK/prog/qwen3-1.7b-2l-q8_0-h200-staged" model="$WORK/models/qwen3-1.7b-2l-q8_0.gguf"
  [[ -x $prog ]] || return 0
  check sanitizer_memcheck_staged compute-sanitizer --tool memcheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "1 2 3" -n 4 --quiet
  check sanitizer_racecheck_staged compute-sanitizer --tool racecheck --error-exitcode 1 "$prog" "$model" \
    --prompt-tokens "1 2 3" -n 4 --quiet
}

stage_bench() {
  stage bench
  check bench bash bench/run_bench.sh
}

main() {
  local stages=("$@")
  ((${#stages[@]})) || stages=(build programs holds bench transformers sanitizer)
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
