#!/usr/bin/env bash
# What each fusion rule buys: decode speed (tg128) of one model with each rule
# that fires on it held back (`lanec plan --hold RULE`), all of them held, and
# the dequant numerics in place of int8 activations. Runs on the GPU machine
# after lanec is built (scripts/gpu_check.sh build):
#   bash bench/ablation.sh [PRESET ...]      (default qwen3-0.6b)
# Prints a markdown table per preset and writes ablation_PRESET.md and the
# all-rules program's --profile (profile_ablation_PRESET.md) to $OUT (or the
# work folder). Presets run one after another; a preset's builds run in
# parallel, its timed runs one at a time.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" ablation
MAX_CTX=512  # for build_variant (bench_env.sh)

row() {  # row MODEL LABEL PROGRAM: fails (after printing the row) when the program gives no tg128 line
  local line launches
  launches=$(grep -m1 '^// launches:' "$3.cu" 2>/dev/null | awk '{print $3}')
  line=$("$3" "$1" --prompt-tokens "1" -n 128 --bench --repeats 3 --ignore-eos --quiet |
    grep '| tg128 |')
  echo "| $2 | $launches | $(echo "$line" | awk -F'|' '{print $7 "|" $8}') |"
  [[ -n $line ]]
}

ablate() {  # ablate PRESET: fails when a build, a timed run or the profile does
  local preset="$1" model="$WORK/$1.gguf" prog="$WORK/$1_" fired v hold label rc=0
  synth_model "$preset" || return 1
  # The rules that fire on this model, from the census.
  fired=$("$LANEC" plan "$model" --knobs "$KNOBS" --census --max-ctx "$MAX_CTX" |
    awk '$2 ~ /^[0-9]+$/ && $3 == "/" && $4 > 0 { print $1 }')
  local variants=("none" $fired "all")
  local all_held
  all_held=$(for v in $fired; do printf 'hold:%s,' "$v"; done)
  for v in "${variants[@]}"; do
    case "$v" in none) hold="" ;; all) hold="$all_held" ;; *) hold="hold:$v" ;; esac
    build_variant "$preset" "held_$v" "$hold" &
  done
  build_variant "$preset" numerics_dequant act:dequant &
  local job
  for job in $(jobs -p); do wait "$job" || rc=1; done
  local failed="$WORK/$preset.failed_runs"  # the table is a pipeline (a subshell): its failures go here
  : >"$failed"
  {
    echo "| variant ($preset Q8_0, h200 knobs) | launches a step | ms/token | t/s |"
    echo "| --- | ---: | ---: | ---: |"
    for v in "${variants[@]}"; do
      case "$v" in none) label="all rules on" ;; all) label="all fired rules held" ;; *) label="--hold $v" ;; esac
      row "$model" "$label" "${prog}_held_$v" || echo "$label" >>"$failed"
    done
    row "$model" "activations: dequant (all rules on)" "${prog}_numerics_dequant" || echo "dequant" >>"$failed"
  } | tee "$DEST/ablation_$preset.md"
  if [[ -s $failed ]]; then
    echo "runs failed: $(paste -sd, "$failed")"
    rc=1
  fi
  # Where the time goes with every rule on: each launch of one step timed alone.
  "${prog}_held_none" "$model" --prompt-tokens "1" -n 1 --profile --repeats 5 --quiet \
    >"$DEST/profile_ablation_$preset.md" 2>&1 || { echo "profile failed"; rc=1; }
  return "$rc"
}

presets=("$@")
((${#presets[@]})) || presets=(qwen3-0.6b)
status=0
for preset in "${presets[@]}"; do ablate "$preset" || status=1; done
exit "$status"
