#!/bin/bash
# GPU check of emitted programs against the CPU reference (needs a GPU, nvcc,
# python3 with numpy, and a built lanec). For each model and knob set: synth
# the model, run `lanec ref` for its logits, plan + build the program, run it
# with the same prompt ids, and compare logits and greedy tokens.
#   tests/emit/gpu_check.sh [BUILD_DIR] [ARCH]     (defaults: build, sm_90)
# "exact" knobs (f32 cache, dequant GEMV) must match the reference to 1e-3 of
# the largest |logit|; the sample knobs (f16 cache, int8 activations) are
# reported and must stay within 5e-2. Exit status 1 when any check fails.
set -u
BUILD=${1:-build}
ARCH=${2:-sm_90}
LANEC=$(cd "$BUILD" && pwd)/lanec
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/lanec_gpu_check_XXXXXX)
PROMPT="1 2 3 4 5 6 7 8"
N=24
status=0

cat > "$WORK/exact.yaml" <<YAML
chip: { name: check, arch: $ARCH, sms: 132, smem_kib_per_block: 227 }
cache_precision: f32
recurrent_state: f32
activations: dequant
YAML
cat > "$WORK/int8.yaml" <<YAML
chip: { name: check, arch: $ARCH, sms: 132, smem_kib_per_block: 227 }
cache_precision: f16
recurrent_state: bf16
activations: int8
YAML

check() {  # name, synth args...
  local name=$1; shift
  local gguf="$WORK/$name.gguf"
  "$LANEC" synth "$@" -o "$gguf" >/dev/null 2>&1 || { echo "FAIL $name: synth"; status=1; return; }
  "$LANEC" ref "$gguf" --tokens "$PROMPT" -n $N --logits "$WORK/$name.ref.npy" > "$WORK/$name.ref.txt" 2>/dev/null \
    || { echo "FAIL $name: lanec ref"; status=1; return; }
  for knobs in exact int8; do
    local prog="$WORK/${name}__$knobs"
    if ! LANEC_SRC="$SRC" "$LANEC" plan "$gguf" --knobs "$WORK/$knobs.yaml" --max-ctx 256 -o "$prog.cu" --build \
         > "$prog.build.log" 2>&1; then
      echo "FAIL $name/$knobs: plan/build"; tail -5 "$prog.build.log"; status=1; continue
    fi
    "$prog" "$gguf" --prompt-tokens "$PROMPT" -n $N --ignore-eos --tokens --quiet --logits "$prog.npy" > "$prog.txt" 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL $name/$knobs: program exited $rc"; cat "$prog.txt"; status=1; continue; fi
    local tol=1e-3; [ $knobs = int8 ] && tol=5e-2
    python3 - "$prog.npy" "$WORK/$name.ref.npy" "$prog.txt" "$WORK/$name.ref.txt" $tol "$name/$knobs" <<'PY' || status=1
import sys, numpy as np
got, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
tol, label = float(sys.argv[5]), sys.argv[6]
gen = lambda p: [l for l in open(p) if l.startswith("generated:")][0].split()[1:]
tokens_agree = gen(sys.argv[3]) == gen(sys.argv[4])
if got.shape != ref.shape:
    print(f"FAIL {label}: logits shape {got.shape}, reference {ref.shape}"); sys.exit(1)
rel = np.abs(got - ref).max() / np.abs(ref).max()
flips = int((got.argmax(1) != ref.argmax(1)).sum())
ok = rel <= tol
print(f"{'ok  ' if ok else 'FAIL'} {label}: max |diff| / max |ref| = {rel:.2e} (tol {tol:g}), "
      f"argmax differs in {flips}/{len(ref)} steps, tokens {'agree' if tokens_agree else 'differ'}")
sys.exit(0 if ok else 1)
PY
  done
  "$WORK/${name}__int8" "$gguf" --bench --prompt-tokens "$PROMPT" -n 128 --quiet 2>&1 | tail -2
}

check qwen3-tiny qwen3-tiny
check qwen3-0.6b-2l qwen3-0.6b --layers 2
check llama-1b-2l llama-1b --layers 2
echo "work files in $WORK"
exit $status
