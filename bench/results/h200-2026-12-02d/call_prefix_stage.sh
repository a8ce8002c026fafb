set -u
export BENCH_WORK=/tmp/bw
bash scripts/gpu_check.sh build > /tmp/build.txt 2>&1; tail -1 /tmp/build.txt
source bench/bench_env.sh pfx
echo "work=$WORK lanec=$LANEC"
for m in qwen3-0.6b qwen3-1.7b qwen3-8b; do synth_model $m & done; wait
ls -la $WORK/*.gguf | awk '{print $5, $9}'
build() {  # build MODEL NAME FLAGS
  NVCC_APPEND_FLAGS="$3" timeout 200 "$LANEC" plan "$WORK/$1.gguf" --knobs "$KNOBS" --max-ctx 512 --build -o "$WORK/$1__$2.cu" > "$WORK/$1__$2.log" 2>&1 || echo "build $1 $2 failed: $(tail -3 $WORK/$1__$2.log)"
}
for m in qwen3-0.6b qwen3-1.7b qwen3-8b; do build $m pfx -DLANEC_GEMV_PREFIX=2 & build $m base "" & done; wait
ls $WORK/*__pfx $WORK/*__base
grep -h "launch_gemv" $WORK/qwen3-8b__pfx.cu | sort | uniq -c | head
# correctness: logits bit-identical whatever the prefix
P=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(151000)) for _ in range(48)))")
for m in qwen3-0.6b qwen3-8b; do
  for j in 0 2 4; do LANEC_PREFIX_J=$j timeout 60 $WORK/${m}__pfx $WORK/$m.gguf --prompt-tokens $P -n 1 --ignore-eos --quiet --logits $WORK/$m.j$j.npy > /dev/null 2>&1 || echo "run $m j$j failed"; done
  python3 -c "
import numpy as np,sys
a=np.load('$WORK/$m.j0.npy')
for j in (2,4):
  b=np.load('$WORK/$m.j%d.npy'%j); print('$m', 'J',j,'identical' if np.array_equal(a,b) else 'DIFFER max %g'%np.abs(a-b).max(), a.shape)
"
done
bench() {  # bench MODEL NAME [env...]
  local m=$1 n=$2; shift 2
  local line
  line=$(env "$@" timeout 60 $WORK/${m}__$n $WORK/$m.gguf --prompt-tokens 1 -n 128 --bench --repeats 5 --ignore-eos --quiet 2>&1 | grep '| tg128 |')
  echo "| $m | $n $* | $(echo "$line" | awk -F'|' '{print $7 "|" $8}') |"
}
echo "| model | variant | ms/token | t/s |"
for m in qwen3-0.6b qwen3-1.7b; do
  bench $m base; bench $m pfx LANEC_PREFIX_J=0; bench $m pfx LANEC_PREFIX_J=1; bench $m pfx LANEC_PREFIX_J=2; bench $m pfx LANEC_PREFIX_J=4
done
m=qwen3-8b
bench $m base; bench $m pfx LANEC_PREFIX_J=0; bench $m pfx LANEC_PREFIX_J=2; bench $m pfx LANEC_PREFIX_J=4; bench $m pfx LANEC_PREFIX_J=6
for s in 6144x4096 4096x4096 24576x4096 4096x12288; do bench $m pfx LANEC_PREFIX_J=4 LANEC_PREFIX_SHAPES=$s; done
bench $m pfx LANEC_PREFIX_J=4 LANEC_PREFIX_ALL=1
