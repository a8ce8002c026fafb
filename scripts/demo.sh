#!/usr/bin/env bash
# Command one of the README: install, build, and run lanec's main job on a
# bundled default — a small Qwen3-shaped model with the real Qwen3 vocabulary:
# synthesize it, describe it, plan it, emit and build its CUDA program, and run
# the program where a GPU is present.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
lanec_build --target lanec
LANEC="$LANEC_BUILD/lanec"
OUT_DIR="$LANEC_ROOT/out"
mkdir -p "$OUT_DIR"
MODEL="$OUT_DIR/qwen3-tiny.gguf"
KNOBS="${LANEC_KNOBS:-$LANEC_ROOT/samples/knobs/h200.yaml}"

echo "== lanec synth qwen3-tiny (real Qwen3 vocabulary)"
"$LANEC" synth qwen3-tiny --type q8_0 --seed 1 \
  --vocab "$LANEC_ROOT/tests/data/vocab/qwen3-vocab.gguf" -o "$MODEL"
echo "== lanec info"
"$LANEC" info "$MODEL"
echo "== lanec plan ($(basename "$KNOBS")): the census"
"$LANEC" plan "$MODEL" --knobs "$KNOBS" --census --max-ctx 1024
echo "== emit and build the CUDA program"
"$LANEC" plan "$MODEL" --knobs "$KNOBS" --max-ctx 1024 -o "$OUT_DIR/qwen3-tiny.cu" --build
echo "== run the generated program"
set +e
"$OUT_DIR/qwen3-tiny" "$MODEL" -p "The capital of France is" -n 24
status=$?
set -e
if ((status == 5)); then
  echo "(no GPU here: the program is built at $OUT_DIR/qwen3-tiny; run it on a machine with one)"
elif ((status != 0)); then
  exit "$status"
fi
