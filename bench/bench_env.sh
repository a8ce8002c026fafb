# shellcheck shell=bash
# Sourced by the bench scripts: `source bench/bench_env.sh NAME`. Moves to the
# source tree, takes the carried dependencies on the GPU machine, and sets
#   ROOT   the source tree       LANEC  its built lanec
#   WORK   $BENCH_WORK or /tmp/lanec-NAME (models, programs, logs)
#   DEST   $OUT or WORK (the tables the script writes)
#   KNOBS  $BENCH_KNOBS or samples/knobs/h200.yaml
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
# On the GPU machine the dependencies come from the carried .deb files.
[[ -d .deps/debs ]] && source scripts/device_env.sh >/dev/null
LANEC="$ROOT/build/lanec"
WORK="${BENCH_WORK:-/tmp/lanec-$1}"
DEST="${OUT:-$WORK}"
KNOBS="${BENCH_KNOBS:-samples/knobs/h200.yaml}"
mkdir -p "$WORK" "$DEST"

# synth_model PRESET: the bench's synthetic Q8_0 model with the real Qwen3
# vocabulary at $WORK/PRESET.gguf (seed 1, so every script times the same
# weights; kept when a shared BENCH_WORK already holds it).
synth_model() {
  [[ -f $WORK/$1.gguf ]] && return 0
  "$LANEC" synth "$1" --type q8_0 --seed 1 --vocab tests/data/vocab/qwen3-vocab.gguf -o "$WORK/$1.gguf" \
    2>/dev/null || { rm -f "$WORK/$1.gguf"; echo "synth $1 failed"; return 1; }
}

# build_variant PRESET NAME FLAGS: plans $WORK/PRESET.gguf under $KNOBS with
# $MAX_CTX cache rows and builds $WORK/PRESET__NAME. FLAGS is comma-separated
# (bench/variants.sh lists the forms): -D switches for nvcc (which appends
# $NVCC_APPEND_FLAGS to the command lanec runs), hold:RULE, act:MODE,
# split:PREFIX=N, rpw:PREFIX=N, ahead:PREFIX, trigger:PREFIX, late:PREFIX, hpb:N, ffn:N, ffnpre:B, ffnahead:N, ffnsplit:N, ffnform:C/W/M/P/A/S, env:NAME=VALUE and ctx:N (N cache rows instead of
# $MAX_CTX). Fails when the plan or the build does.
# Used by variants.sh, chain_profile.sh and ablation.sh.
build_variant() {
  local bin="$WORK/$1__$2" nvcc_flags=() plan_args=() holds="" knobs="$KNOBS" splits=() max_ctx="$MAX_CTX" f
  for f in ${3//,/ }; do
    case "$f" in
      hold:*) holds="${holds:+$holds,}${f#hold:}" ;;
      split:*) splits+=("split:${f#split:}") ;;
      rpw:*) splits+=("rpw:${f#rpw:}") ;;
      ahead:*) splits+=("$f") ;;
      trigger:* | late:*) splits+=("$f") ;;
      hpb:* | ffn:* | ffnpre:* | ffnahead:* | ffnsplit:* | ffnform:*) splits+=("$f") ;;
      ctx:*) max_ctx="${f#ctx:}" ;;
      env:*) export "${f#env:}" ;;
      act:*) knobs="$WORK/knobs_$2.yaml"
        sed -e "s/^activations:.*/activations: ${f#act:}/" "$KNOBS" >"$knobs" ;;
      *) nvcc_flags+=("$f") ;;
    esac
  done
  # Fewer rows than the depth's would cut the 128 timed tokens short.
  ((max_ctx >= MAX_CTX)) || { echo "build $1 $2: ctx:$max_ctx is below the $MAX_CTX rows the depth needs"; return 1; }
  [[ -n $holds ]] && plan_args+=(--hold "$holds")
  ((${#splits[@]})) || plan_args+=(--build)
  NVCC_APPEND_FLAGS="${nvcc_flags[*]}" "$LANEC" plan "$WORK/$1.gguf" --knobs "$knobs" --max-ctx "$max_ctx" \
    "${plan_args[@]}" -o "$bin.cu" >"$bin.log" 2>&1 || { echo "build $1 $2 failed: $(tail -3 "$bin.log")"; return 1; }
  ((${#splits[@]} == 0)) || build_with_splits "$bin" "${nvcc_flags[*]}" "${splits[@]}"
}

# set_early_trigger CU PREFIX FROM TO: in the norm and quantize launches
# whose names start with PREFIX, the EarlyTrigger template argument FROM
# (", true" or nothing after the others) becomes TO.
set_early_trigger() {
  local range="/{  \/\/ $2/,/launch_/"
  sed -i -e "$range s/launch_rms_norm<\([a-z]*\), \([a-z]*\)$3>/launch_rms_norm<\1, \2$4>/" \
    -e "$range s/launch_quantize_q8<\([a-z]*\)$3>/launch_quantize_q8<\1$4>/" "$1"
}

# build_with_splits BIN NVCC_FLAGS split:PREFIX=N|rpw:PREFIX=N|ahead:PREFIX|trigger:PREFIX|late:PREFIX|hpb:N|ffn:N|ffnpre:B|ffnahead:N|ffnsplit:N|ffnform:C/W/M/P/A/S...:
# edits the split_k or the rows a warp of the matching GEMV launches, has
# them load their second trip ahead (launch_gemv's Ahead), has the matching
# norm and SwiGLU quantize launches trigger the next launch at their start
# (their EarlyTrigger, where rule early_trigger declined it) or only after
# their wait (late:, where it fired), or the query
# heads an attention block serves (every attention launch; N must divide the
# model's query heads a kv head), or the intermediate blocks an ffn thread
# block forms (ffn:N, every ffn launch; N must divide ffn / 32) and whether
# its first down group loads before the wait (ffnpre:true|false), its
# gate/up trips a lane loads before the wait (ffnahead:2) and its blocks a
# cluster (ffnsplit:2, after any ffnahead), or all its template arguments at once
# (ffnform:CHUNKS/WARPS/MINBLOCKS/PRELOAD/AHEAD/SPLIT, e.g. ffnform:1/8/2/true/1/2), in BIN.cu
# and builds it with the command
# the program's header gives.
build_with_splits() {
  local bin="$1" flags="$2" s e cmd
  shift 2
  for s in "$@"; do
    e="${s#*:}"
    case "$s" in
      split:*) sed -i "/{  \/\/ ${e%%=*}/,/launch_gemv/ s/p\.split_k = [0-9]*;/p.split_k = ${e#*=};/" "$bin.cu" ;;
      rpw:*) sed -i "/{  \/\/ ${e%%=*}/,/launch_gemv/ s/\(launch_gemv<WeightFormat::[a-z0-9_]*, Activation::[a-z0-9]*, \)[0-9]/\1${e#*=}/" "$bin.cu" ;;
      ahead:*) sed -i "/{  \/\/ ${e}/,/launch_gemv/ s/\(launch_gemv<WeightFormat::[a-z0-9_]*, Activation::[a-z0-9]*, [0-9], [a-z]*\)>/\1, false, true>/" "$bin.cu" ;;
      trigger:*) set_early_trigger "$bin.cu" "$e" "" ", true" ;;
      late:*) set_early_trigger "$bin.cu" "$e" ", true" "" ;;
      hpb:*) sed -i "s/\(launch_attention<[0-9]*, CachePrecision::[a-z0-9]*, \)[0-9]*>/\1${e}>/" "$bin.cu" ;;
      ffn:*) sed -i "s/launch_ffn<[0-9]*, /launch_ffn<${e}, /" "$bin.cu" ;;
      ffnpre:*) sed -i "s/\(launch_ffn<[0-9]*, [0-9]*, [0-9]*, \)[a-z]*>/\1${e}>/" "$bin.cu" ;;
      ffnahead:*) sed -i "s/\(launch_ffn<[0-9]*, [0-9]*, [0-9]*, [a-z]*\)>/\1, ${e}>/" "$bin.cu" ;;
      ffnform:*) sed -i "s/launch_ffn<[0-9a-z, ]*>/launch_ffn<${e//\//, }>/" "$bin.cu" ;;
      ffnsplit:*) sed -i -e "s/\(launch_ffn<[0-9]*, [0-9]*, [0-9]*, [a-z]*, [0-9]*\)>/\1, ${e}>/" \
        -e "s/\(launch_ffn<[0-9]*, [0-9]*, [0-9]*, [a-z]*\)>/\1, 1, ${e}>/" "$bin.cu" ;;
    esac
  done
  cmd=$(grep -m1 '^//   nvcc ' "$bin.cu" | sed 's#^//   ##')
  (cd "$(dirname "$bin")" && export LANEC_SRC="$ROOT" NVCC_APPEND_FLAGS="$flags" && eval "$cmd") >>"$bin.log" 2>&1 ||
    { echo "build $bin failed: $(tail -3 "$bin.log")"; return 1; }
}
