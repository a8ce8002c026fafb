#!/usr/bin/env bash
# shellcheck disable=SC2317  # the stage functions run as "stage_$s"
# The forms of the fused FFN launch (kernels/ffn.cuh) timed in one GPU call,
# after lanec is built (scripts/gpu_check.sh build):
#   bash bench/ffn_forms.sh [STAGE ...]    (default: fold variants)
# Stages (fold and sweep run twice: as built, and with -DLANEC_FFN_DOWN_AFTER_LOOP=0, *_inloop):
#   fold      bench/ffn_fold.cu: every form against the chain, a layer alone (ffn_fold.json)
#   sweep     the kernel sweep's ffn family against its references (sweep_ffn.txt)
#   variants  bench/variants.sh on each Qwen3 shape: the planned form against
#             the forms the planner does not choose (variants_ffn_<preset>.md)
# Each stage step runs under a timeout (FFN_FORMS_TIMEOUT seconds, 240), so a call
# cut short still returns what finished. Writes to $OUT (or /tmp/lanec-ffn-forms).
# FFN_FORMS_PRESETS picks the shapes (default all three). Within a device
# call's 10 minutes: `fold variants` with FFN_FORMS_PRESETS="qwen3-0.6b
# qwen3-1.7b" in one call, `variants sweep` with qwen3-8b in the next.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
DEST="${OUT:-/tmp/lanec-ffn-forms}"
LIMIT="${FFN_FORMS_TIMEOUT:-240}"
export BENCH_WORK="${BENCH_WORK:-/tmp/lanec-ffn-forms}"
mkdir -p "$DEST" "$BENCH_WORK"
stages=("$@")
((${#stages[@]})) || stages=(fold variants)

# The forms each shape is timed in, besides its planned one (base): the
# launch_ffn template arguments CHUNKS/WARPS/MINBLOCKS/PRELOAD/AHEAD/SPLIT.
# 16 warps take an SM's whole register file (one block an SM); 8 warps with
# MINBLOCKS 2 fit two, so 192 blocks run as one wave: 0.6B split in two,
# 1.7B at one block of 32 a thread block, 8B at two; 8B's planned 3 is one
# wave of 128 blocks of 16 warps, its c2 two. trig: the attention's norm after the ffn launch
# triggering early (rule early_trigger measured it only after GEMVs).
# inloop: the kernel switch off that loads 1.7B's second down chunk after
# the gate/up loop (on by default).
INLOOP_FLAG="-DLANEC_FFN_DOWN_AFTER_LOOP=0"
INLOOP="inloop=$INLOOP_FLAG"
declare -A FORMS=(
  [qwen3-0.6b]="base= a2=ffnahead:2 s2=ffnsplit:2 w8s2=ffnform:1/8/2/true/1/2 $INLOOP"
  [qwen3-1.7b]="base= a2=ffnahead:2 w8c1=ffnform:1/8/2/true/1/1 w8s2=ffnform:2/8/2/false/1/2 $INLOOP"
  [qwen3-8b]="base= c2=ffn:2 w8=ffnform:2/8/2/false/1/1 a2=ffnahead:2 trig=trigger:rms_norm_attn_norm $INLOOP"
)
PRESETS="${FFN_FORMS_PRESETS:-qwen3-0.6b qwen3-1.7b qwen3-8b}"

stage_fold() {  # the forms as built, then with the down-after-loop switch off
  local flags suffix
  for flags in "" "$INLOOP_FLAG"; do
    suffix="${flags:+_inloop}"
    nvcc -std=c++17 -O3 -arch=sm_90 ${flags:+"$flags"} -o "$BENCH_WORK/ffn_fold$suffix" bench/ffn_fold.cu &&
      timeout "$LIMIT" "$BENCH_WORK/ffn_fold$suffix" "${FFN_FOLD_REPLAYS:-20}" >"$DEST/ffn_fold$suffix.json" ||
      return 1
  done
}

stage_sweep() {  # as built, then with the down-after-loop switch off
  LANEC_SWEEP_BIN="$BENCH_WORK/kernel_sweep" timeout "$LIMIT" bash scripts/kernel_sweep.sh --only ffn \
    >"$DEST/sweep_ffn.txt" 2>&1 &&
    LANEC_SWEEP_FLAGS="$INLOOP_FLAG" LANEC_SWEEP_BIN="$BENCH_WORK/kernel_sweep_inloop" timeout "$LIMIT" \
      bash scripts/kernel_sweep.sh --only ffn >"$DEST/sweep_ffn_inloop.txt" 2>&1
}

stage_variants() {
  local p
  for p in $PRESETS; do
    OUT="$DEST/$p" VARIANTS="${FORMS[$p]}" VARIANTS_REPEATS="${VARIANTS_REPEATS:-3}" \
      timeout "$LIMIT" bash bench/variants.sh "$p" >"$DEST/variants_ffn_$p.log" 2>&1
    [[ -f $DEST/$p/variants.md ]] && mv "$DEST/$p/variants.md" "$DEST/variants_ffn_$p.md" && rmdir "$DEST/$p"
    # The programs go (the model stays for the next stages); their build logs join the table's.
    cat "$BENCH_WORK/${p}__"*.log >>"$DEST/variants_ffn_$p.log" 2>/dev/null
    rm -f "$BENCH_WORK/${p}__"*
  done
}

status=0
for s in "${stages[@]}"; do
  declare -F "stage_$s" >/dev/null || { echo "ffn_forms: no stage '$s' (fold, sweep, variants)" >&2; exit 2; }
  echo "===== $s"
  start=$SECONDS
  "stage_$s" || { echo "ffn_forms: stage $s failed (rc $?)"; status=1; }
  echo "$s took $((SECONDS - start)) s"
done
for f in "$DEST"/ffn_fold*.json "$DEST"/variants_ffn_*.md; do [[ -f $f ]] && { echo "--- $f"; cat "$f"; }; done
for f in "$DEST"/sweep_ffn*.txt; do [[ -f $f ]] && { echo "--- $f"; tail -n 3 "$f"; }; done
exit "$status"
