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
