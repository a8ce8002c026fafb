#!/usr/bin/env bash
# Decode benchmark of lanec's generated programs on the GPU machine, in one call:
#   bash bench/run_bench.sh [PRESET ...]     (default: qwen3-0.6b qwen3-1.7b qwen3-8b)
# Needs lanec built (build/lanec, e.g. by scripts/gpu_check.sh build). For each
# preset: synthesize it (Q8_0, real Qwen3 vocabulary), plan with
# samples/knobs/h200.yaml, build, run tg128 and tg128 @ d4096 (--bench, 3 timed
# repeats after a warm-up), and relate the speed to the roofline: weight bytes
# read per token (+ the K and V rows attention reads at depth d) over the copy
# bandwidth measured in the same run, and the launch floor (bench/launch_floor.cu:
# what a dependent launch and a grid barrier cost with no work). Prints a
# llama-bench-like table and writes bench.json (and bench.md) to $OUT, or to
# the work folder.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" bench
REPEATS="${BENCH_REPEATS:-3}"
# BENCH_HOLD: rules to hold back (lanec plan --hold), e.g. to time a plan without one.
DEPTH="${BENCH_DEPTH:-4096}"  # 0: tg128 at an empty context only (plans keep 4352 rows)
presets=("$@")
((${#presets[@]})) || presets=(qwen3-0.6b qwen3-1.7b qwen3-8b)

nvcc -std=c++17 -O2 -arch=sm_90 -o "$WORK/copy_bandwidth" bench/copy_bandwidth.cu || exit 1
"$WORK/copy_bandwidth" 4096 | tee "$WORK/copy.json"
# The floor under a chain of dependent launches, and a grid barrier's cost.
nvcc -std=c++17 -O2 -arch=sm_90 -o "$WORK/launch_floor" bench/launch_floor.cu &&
  "$WORK/launch_floor" 256 | tee "$WORK/launch_floor.json" || echo '{}' >"$WORK/launch_floor.json"

for p in "${presets[@]}"; do
  synth_model "$p" || exit 1
  ( "$LANEC" plan "$WORK/$p.gguf" --knobs "$KNOBS" --max-ctx 4352 ${BENCH_HOLD:+--hold "$BENCH_HOLD"} \
      -o "$WORK/$p.cu" --build >"$WORK/$p.build.log" 2>&1 || echo "build $p failed" ) &
done
wait

python3 - "$WORK" "$DEST" "$LANEC" "$REPEATS" "$DEPTH" "${presets[@]}" <<'PY'
import json, re, subprocess, sys
sys.path.insert(0, "bench")
from depth_prompt import prompt as bench_prompt
work, dest, lanec, repeats, depth, presets = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]
copy = json.load(open(f"{work}/copy.json"))
floor = json.load(open(f"{work}/launch_floor.json"))
bw = copy["read_write_tb_per_s"] * 1e12
rows = []
for p in presets:
    info = json.loads(subprocess.run([lanec, "info", f"{work}/{p}.gguf", "--json"], capture_output=True, text=True, check=True).stdout)
    hp = {k: v for k, v in info["hyperparameters"].items()}
    vocab = int(hp["vocab_size"])
    weight_bytes = info["weight_bytes_per_step"]
    kv_bytes_per_pos = 2 * int(hp["block_count"]) * int(hp["attention.head_count_kv"]) * int(hp["attention.key_length"]) * 2  # K+V, f16
    tests = [("tg128", 1)] + ([(f"tg128 @ d{depth}", depth)] if depth > 0 else [])
    for test, n_prompt in tests:
        prompt = bench_prompt(n_prompt)
        cmd = [f"{work}/{p}", f"{work}/{p}.gguf", "--prompt-tokens", prompt, "-n", "128", "--bench",
               "--repeats", str(repeats), "--ignore-eos", "--quiet"]
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        line = next((l for l in proc.stdout.splitlines() if re.search(r"\| tg128 \|", l)), None)
        if proc.returncode != 0 or line is None:
            print(f"{p} {test}: FAILED (exit {proc.returncode})\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
            rows.append({"model": p, "test": test, "error": proc.returncode})
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        ms = float(cells[-2]); mean_sd = cells[-1]
        mean, sd = (float(x) for x in mean_sd.split("±"))
        bytes_per_token = weight_bytes + (kv_bytes_per_pos * (n_prompt + 64) if n_prompt > 1 else kv_bytes_per_pos)
        achieved = bytes_per_token / (ms * 1e-3)
        rows.append({"model": p, "size_bytes": info["weight_bytes"], "test": test, "n_depth": n_prompt if n_prompt > 1 else 0,
                     "avg_ts": mean, "stddev_ts": sd, "ms_per_token": ms, "bytes_per_token": bytes_per_token,
                     "achieved_tb_per_s": achieved / 1e12, "roofline_ts": bw / bytes_per_token,
                     "fraction_of_bandwidth": achieved / bw})
        print(f"{p} {test}: {mean:.1f} ± {sd:.1f} t/s, {ms:.3f} ms/token, {100 * achieved / bw:.1f} % of bandwidth", flush=True)
md = ["| model | size | test | t/s | ms/token | GB/token | % of measured bandwidth |", "| --- | ---: | --- | ---: | ---: | ---: | ---: |"]
for r in rows:
    if "error" in r:
        md.append(f"| {r['model']} | | {r['test']} | FAILED | | | |"); continue
    md.append(f"| {r['model']} Q8_0 | {r['size_bytes']/2**30:.2f} GiB | {r['test']} | {r['avg_ts']:.1f} ± {r['stddev_ts']:.1f} | "
              f"{r['ms_per_token']:.3f} | {r['bytes_per_token']/1e9:.3f} | {100*r['fraction_of_bandwidth']:.1f} % |")
md.append(f"\ncopy bandwidth (read + write): {copy['read_write_tb_per_s']:.2f} TB/s")
if floor:
    md.append(f"launch floor (bench/launch_floor.cu, µs a step over {floor['steps']} steps): "
              f"empty PDL launch {floor['chain_1block_us']:.2f}, 1 block with a dependent read "
              f"{floor['chain_1block_rw_us']:.2f}, {floor['sms']} blocks {floor['chain_grid_us']:.2f}; "
              f"grid barrier in one persistent kernel {floor['barrier_grid_us']:.2f}"
              + (f"; a graph boundary between replays of {floor['steps']} such steps adds "
                 f"{floor['graph_boundary_us']:.2f} µs" if "graph_boundary_us" in floor else ""))
text = "\n".join(md)
print(text)
open(f"{dest}/bench.md", "w").write(text + "\n")
json.dump({"copy": copy, "launch_floor": floor, "results": rows}, open(f"{dest}/bench.json", "w"), indent=2)
PY

# Per-launch profile of one step of each model (at position 1), slowest first.
for p in "${presets[@]}"; do
  "$WORK/$p" "$WORK/$p.gguf" --prompt-tokens "1" -n 1 --profile --repeats 5 --quiet \
    >"$DEST/profile_$p.md" 2>&1 || echo "profile $p failed"
  head -n 16 "$DEST/profile_$p.md"
  tail -n 2 "$DEST/profile_$p.md"
done

