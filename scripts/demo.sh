#!/usr/bin/env bash
# Command one of the README: install, build, and run lanec's main job on a
# bundled default — a small Qwen3-shaped model with the real Qwen3 vocabulary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
lanec_build --target lanec
LANEC="$LANEC_BUILD/lanec"
OUT_DIR="$LANEC_ROOT/out"
mkdir -p "$OUT_DIR"
MODEL="$OUT_DIR/qwen3-tiny.gguf"

echo "== lanec synth qwen3-tiny (real Qwen3 vocabulary)"
"$LANEC" synth qwen3-tiny --type q8_0 --seed 1 \
  --vocab "$LANEC_ROOT/tests/data/vocab/qwen3-vocab.gguf" -o "$MODEL"
echo "== lanec info"
"$LANEC" info "$MODEL"
