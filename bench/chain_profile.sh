#!/usr/bin/env bash
# Where a replayed decode step's time goes, launch by launch, in the chain
# itself: builds each model's program with -DLANEC_CHAIN_STAMPS (block 0 of
# every launch stamps the global timer when its wait returns,
# kernels/common.cuh) and runs its --profile, which then adds the in-graph
# table (µs by kind, the costliest launches, one layer in order). Runs on the
# GPU machine after lanec is built (scripts/gpu_check.sh build):
#   bash bench/chain_profile.sh [PRESET ...]      (default qwen3-0.6b)
# Env: CHAIN_VARIANTS (space-separated NAME=FLAGS, the flags of
# bench/variants.sh: -D switches, hold:RULE, act:MODE, split:/rpw:PREFIX=N;
# default "base="), CHAIN_DEPTH=D profiles the step after a D-token prompt
# (default 1). Writes chain_PRESET_NAME.md to
# $OUT (or the work folder) and prints each variant's table by kind and its
# one layer in order.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" chain
DEPTH="${CHAIN_DEPTH:-1}"
VARIANTS="${CHAIN_VARIANTS:-base=}"
MAX_CTX=$((DEPTH > 256 ? DEPTH + 256 : 512))
presets=("$@")
((${#presets[@]})) || presets=(qwen3-0.6b)

for p in "${presets[@]}"; do
  synth_model "$p" || exit 1
  for v in $VARIANTS; do build_variant "$p" "${v%%=*}" "-DLANEC_CHAIN_STAMPS,${v#*=}" & done
done
wait

prompt=1
((DEPTH > 1)) && prompt="$(python3 bench/depth_prompt.py "$DEPTH")"
for p in "${presets[@]}"; do
  for v in $VARIANTS; do
    name="${v%%=*}" table="$DEST/chain_${p}_${v%%=*}.md"
    [[ -x $WORK/${p}__$name ]] || continue
    "$WORK/${p}__$name" "$WORK/$p.gguf" --prompt-tokens "$prompt" -n 1 --profile --repeats 20 --quiet \
      >"$table" 2>&1 || echo "profile $p $name failed"
    echo "## $p $name (${v#*=}; depth $DEPTH)"
    sed -n '/^in-graph chain/,/^$/p' "$table"
    sed -n '/^one layer in order/,$p' "$table"
  done
done
