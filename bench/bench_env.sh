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
