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
# rpw:gemv_logits=2); ahead:PREFIX has those GEMV launches load their second
# trip ahead (launch_gemv's Ahead, e.g. ahead:gemv_q); trigger:PREFIX has those norm and SwiGLU
# quantize launches trigger the next launch at their start (e.g. trigger:rms_norm_ffn, where rule
# early_trigger declined it), late:PREFIX the reverse where it fired; hpb:N sets the query heads an attention block serves;
# ffn:N the intermediate blocks of 32 an ffn thread block forms and ffnpre:true|false its first down group's
# load before the wait (every ffn launch, e.g. ffn:3,ffnpre:false on 8B), ffnahead:2 its gate/up rows' second
# trip a lane too, ffnsplit:2 clusters of two blocks on each set of intermediate blocks (after any ffnahead),
# ffnform:C/W/M/P/A/S all of launch_ffn's template arguments (e.g. ffnform:1/8/2/true/1/2);
# env:NAME=VALUE exports NAME to that variant's planning and build (a planner switch
# under test); ctx:N plans N cache rows instead of the depth's (the planner's attention
# splits follow the rows, e.g. ctx:4352 against a 4096-row plan).
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

# build_variant (bench_env.sh) plans and builds each variant.
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
