#!/usr/bin/env bash
# Decode speed of one emitted program built with different compile-time
# switches of the kernel library (LANEC_PDL, LANEC_PDL_TRIGGER, ...):
# the same plan, the same weights, only the -D flags
# differ, so the table isolates what a switch buys. Runs on the GPU machine
# after lanec is built (scripts/gpu_check.sh build):
#   bash bench/variants.sh [PRESET ...]        (default qwen3-0.6b)
# Env: VARIANTS (space-separated NAME=FLAGS, flags comma-separated), e.g.
#   VARIANTS="plain=-DLANEC_PDL=0 all-on=" bash bench/variants.sh qwen3-8b
# A flag hold:RULE plans with --hold RULE and act:MODE with `activations: MODE`
# instead of being passed to nvcc (same weights, a different plan);
# split:PREFIX=N sets split_k N in every GEMV launch whose name starts with
# PREFIX (e.g. split:gemv_q_l=4) in the emitted program before it is built,
# and rpw:PREFIX=N its rows a warp (the launch's template argument, e.g.
# rpw:gemv_logits=2).
# VARIANTS_DEPTH=D times tg128 after a D-token prompt (plans get D + 256 cache
# rows) instead of at an empty context, e.g. 4096 for attention changes.
# VARIANTS_REPEATS=N timed runs a variant (5).
# Prints a markdown table and writes variants.md to $OUT (or the work folder).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" variants
VARIANTS="${VARIANTS:-pdl-off=-DLANEC_PDL=0 wait-only=-DLANEC_PDL_TRIGGER=0 all-on=}"
DEPTH="${VARIANTS_DEPTH:-0}"
REPEATS="${VARIANTS_REPEATS:-5}"
MAX_CTX=$((DEPTH > 256 ? DEPTH + 256 : 512))
presets=("$@")
((${#presets[@]})) || presets=(qwen3-0.6b)

# Each variant is its own plan-and-build; nvcc itself appends
# $NVCC_APPEND_FLAGS to the command lanec runs.
build_variant() {  # build_variant PRESET NAME FLAGS
  local bin="$WORK/$1__$2" nvcc_flags=() plan_args=() holds="" knobs="$KNOBS" splits=() f
  for f in ${3//,/ }; do
    case "$f" in
      hold:*) holds="${holds:+$holds,}${f#hold:}" ;;
      split:*) splits+=("split:${f#split:}") ;;
      rpw:*) splits+=("rpw:${f#rpw:}") ;;
      act:*) knobs="$WORK/knobs_$2.yaml"
        sed -e "s/^activations:.*/activations: ${f#act:}/" "$KNOBS" >"$knobs" ;;
      *) nvcc_flags+=("$f") ;;
    esac
  done
  [[ -n $holds ]] && plan_args+=(--hold "$holds")
  ((${#splits[@]})) || plan_args+=(--build)
  NVCC_APPEND_FLAGS="${nvcc_flags[*]}" "$LANEC" plan "$WORK/$1.gguf" --knobs "$knobs" --max-ctx "$MAX_CTX" \
    "${plan_args[@]}" -o "$bin.cu" >"$bin.log" 2>&1 || { echo "build $1 $2 failed: $(tail -3 "$bin.log")"; return; }
  ((${#splits[@]})) && build_with_splits "$bin" "${nvcc_flags[*]}" "${splits[@]}"
}

# build_with_splits BIN NVCC_FLAGS split:PREFIX=N|rpw:PREFIX=N...: edits the
# split_k or the rows a warp of the matching GEMV launches in BIN.cu and
# builds it with the command the program's header gives.
build_with_splits() {
  local bin="$1" flags="$2" s e cmd
  shift 2
  for s in "$@"; do
    e="${s#*:}"
    case "$s" in
      split:*) sed -i "/{  \/\/ ${e%%=*}/,/launch_gemv/ s/p\.split_k = [0-9]*;/p.split_k = ${e#*=};/" "$bin.cu" ;;
      rpw:*) sed -i "/{  \/\/ ${e%%=*}/,/launch_gemv/ s/\(launch_gemv<WeightFormat::[a-z0-9_]*, Activation::[a-z0-9]*, \)[0-9]/\1${e#*=}/" "$bin.cu" ;;
    esac
  done
  cmd=$(grep -m1 '^//   nvcc ' "$bin.cu" | sed 's#^//   ##')
  (cd "$(dirname "$bin")" && export LANEC_SRC="$ROOT" NVCC_APPEND_FLAGS="$flags" && eval "$cmd") >>"$bin.log" 2>&1 ||
    echo "build $bin failed: $(tail -3 "$bin.log")"
}

for p in "${presets[@]}"; do
  synth_model "$p" || exit 1
  for v in $VARIANTS; do build_variant "$p" "${v%%=*}" "${v#*=}" & done
done
wait

{
  echo "| model | variant (tg128 @ d$DEPTH) | flags | ms/token | t/s |"
  echo "| --- | --- | --- | ---: | ---: |"
  prompt=1
  ((DEPTH > 1)) && prompt="$(python3 bench/depth_prompt.py "$DEPTH")"
  for p in "${presets[@]}"; do
    for v in $VARIANTS; do
      name="${v%%=*}" flags="${v#*=}"
      line=$("$WORK/${p}__$name" "$WORK/$p.gguf" --prompt-tokens "$prompt" -n 128 --bench --repeats "$REPEATS" --ignore-eos \
        --quiet 2>&1 | grep '| tg128 |')
      echo "| $p | $name | ${flags//,/ } | $(echo "$line" | awk -F'|' '{print $7 "|" $8}') |"
    done
  done
} | tee "$DEST/variants.md"
