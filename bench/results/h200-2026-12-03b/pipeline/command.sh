#!/usr/bin/env bash
set -uo pipefail
mkdir -p "$OUT"
T0=$(date +%s)
bash scripts/gpu_check.sh build > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
source scripts/device_env.sh >/dev/null
( nvcc -std=c++17 -O2 -arch=sm_90 -I. -DLANEC_GEMV_PIPELINE=2 -DLANEC_GEMV_PIPELINE_BLOCKS=8 tests/kernels/kernel_sweep.cu -o /tmp/ks2 > $OUT/sweep_build2.txt 2>&1;
  nvcc -std=c++17 -O2 -arch=sm_90 -I. -DLANEC_GEMV_PIPELINE=4 -DLANEC_GEMV_PIPELINE_EARLY=4 tests/kernels/kernel_sweep.cu -o /tmp/ks4 > $OUT/sweep_build4.txt 2>&1 ) &
SW=$!
export BENCH_WORK=/tmp/bw
P2="-DLANEC_GEMV_PIPELINE=2,-DLANEC_GEMV_PIPELINE_BLOCKS=8"
P4="-DLANEC_GEMV_PIPELINE=4,-DLANEC_GEMV_PIPELINE_EARLY=4"
P4b="-DLANEC_GEMV_PIPELINE=4,-DLANEC_GEMV_PIPELINE_EARLY=1"
VARIANTS="base= p2=$P2 p4e4=$P4 p4e1=$P4b" VARIANTS_REPEATS=3 timeout 330 bash bench/variants.sh qwen3-0.6b qwen3-1.7b qwen3-8b > $OUT/v0.txt 2>&1; echo "v0 rc=$?"
grep '^|' $OUT/v0.txt | tee $OUT/variants_pipeline_d0.md
echo "done $(( $(date +%s) - T0 )) s"
for m in qwen3-0.6b qwen3-8b; do
  for v in base p2 p4e4; do
    timeout 30 /tmp/bw/${m}__$v /tmp/bw/$m.gguf --prompt-tokens 1 -n 48 --ignore-eos --quiet > $OUT/tok_${m}_$v.txt 2>&1
  done
  for v in p2 p4e4; do cmp -s $OUT/tok_${m}_base.txt $OUT/tok_${m}_$v.txt && echo "$m $v tokens identical" || echo "$m $v tokens differ"; done
done
wait $SW; tail -2 $OUT/sweep_build2.txt $OUT/sweep_build4.txt
for d in 2 4; do
timeout 60 /tmp/ks$d --only gemv > $OUT/ks_gemv_p$d.txt 2>&1; echo "sweep p$d rc=$?"
grep -c '^FAIL' $OUT/ks_gemv_p$d.txt; grep '^FAIL' $OUT/ks_gemv_p$d.txt | head -3; tail -1 $OUT/ks_gemv_p$d.txt
done
echo "all done $(( $(date +%s) - T0 )) s"
