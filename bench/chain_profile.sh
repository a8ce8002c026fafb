#!/usr/bin/env bash
# Where a replayed decode step's time goes, launch by launch, in the chain
# itself: builds each model's program with -DLANEC_CHAIN_STAMPS (block 0 of
# every launch stamps the global timer when its wait returns,
# kernels/common.cuh) and runs its --profile, which then adds the in-graph
# table (µs by kind, the costliest launches, one layer in order). Runs on the
# GPU machine after lanec is built (scripts/gpu_check.sh build):
#   bash bench/chain_profile.sh [PRESET ...]      (default qwen3-0.6b)
# Env: CHAIN_FLAGS (comma-separated extra -D flags, hold:RULE and act:MODE as
# in variants.sh are not taken here), CHAIN_DEPTH=D profiles the step after a
# D-token prompt (default 1). Writes chain_PRESET.md to $OUT (or the work folder).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" chain
DEPTH="${CHAIN_DEPTH:-1}"
MAX_CTX=$((DEPTH > 256 ? DEPTH + 256 : 512))
presets=("$@")
((${#presets[@]})) || presets=(qwen3-0.6b)
flags="-DLANEC_CHAIN_STAMPS ${CHAIN_FLAGS//,/ }"

for p in "${presets[@]}"; do
  [[ -f $WORK/$p.gguf ]] || "$LANEC" synth "$p" --type q8_0 --seed 1 --vocab tests/data/vocab/qwen3-vocab.gguf \
    -o "$WORK/$p.gguf" 2>/dev/null || { echo "synth $p failed"; exit 1; }
  NVCC_APPEND_FLAGS="$flags" "$LANEC" plan "$WORK/$p.gguf" --knobs "$KNOBS" --max-ctx "$MAX_CTX" \
    -o "$WORK/$p.cu" --build >"$WORK/$p.log" 2>&1 || { echo "build $p failed: $(tail -3 "$WORK/$p.log")"; continue; }
done

prompt=1
((DEPTH > 1)) && prompt="$(python3 bench/depth_prompt.py "$DEPTH")"
for p in "${presets[@]}"; do
  [[ -x $WORK/$p ]] || continue
  "$WORK/$p" "$WORK/$p.gguf" --prompt-tokens "$prompt" -n 1 --profile --repeats 20 --quiet \
    >"$DEST/chain_$p.md" 2>&1 || echo "profile $p failed"
  echo "## $p (depth $DEPTH)"
  sed -n '/^in-graph chain/,$p' "$DEST/chain_$p.md"
done
