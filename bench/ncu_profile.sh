#!/usr/bin/env bash
# Hardware counters (Nsight Compute) of one decode step's launches: what a
# timing cannot say, such as why a kernel streams below the bandwidth (its
# DRAM throughput, occupancy, registers and where its warps stall). Runs on
# the GPU machine after lanec is built (scripts/gpu_check.sh build):
#   bash bench/ncu_profile.sh PRESET [DEPTH]
# The program's --profile step at position DEPTH (default 1: an empty
# context) is the profiler's range (cudaProfilerStart/Stop in
# kernels/runtime/program.cuh); NCU_SKIP launches of it are skipped (default
# 1, the embedding) and NCU_COUNT profiled (default 9: one Qwen3 layer).
# The clocks are left as they are (--clock-control none). Writes the full
# report ncu_PRESET_dDEPTH.txt and a table ncu_PRESET_dDEPTH.md to $OUT (or
# the work folder) and prints the table.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" ncu
preset="${1:?usage: bash bench/ncu_profile.sh PRESET [DEPTH]}"
depth="${2:-1}"
command -v ncu >/dev/null || { echo "ncu_profile: ncu (Nsight Compute) is not on the PATH"; exit 1; }
MAX_CTX=$((depth > 256 ? depth + 256 : 512))
synth_model "$preset" || exit 1
bin="$WORK/${preset}__ncu"
"$LANEC" plan "$WORK/$preset.gguf" --knobs "$KNOBS" --max-ctx "$MAX_CTX" -o "$bin.cu" --build >"$bin.log" 2>&1 ||
  { echo "ncu_profile: building $preset failed: $(tail -3 "$bin.log")"; exit 1; }
prompt=1
((depth > 1)) && prompt="$(python3 bench/depth_prompt.py "$depth")"

name="ncu_${preset}_d$depth"
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats
  --section WarpStateStats --section SchedulerStats)
ncu --clock-control none --profile-from-start off --launch-skip "${NCU_SKIP:-1}" --launch-count "${NCU_COUNT:-9}" \
  "${sections[@]}" "$bin" "$WORK/$preset.gguf" --prompt-tokens "$prompt" -n 1 --profile --repeats 1 --quiet \
  >"$DEST/$name.txt" 2>&1 || { echo "ncu_profile: ncu failed: $(tail -5 "$DEST/$name.txt")"; exit 1; }
python3 bench/ncu_table.py "$DEST/$name.txt" "$preset at position $depth" | tee "$DEST/$name.md"
