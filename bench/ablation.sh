#!/usr/bin/env bash
# What each fusion rule buys: decode speed (tg128) of one model with each rule
# that fires on it held back (`lanec plan --hold RULE`), all of them held, and
# the dequant numerics in place of int8 activations. Runs on the GPU machine
# after lanec is built (scripts/gpu_check.sh build):
#   bash bench/ablation.sh [PRESET]          (default qwen3-0.6b)
# Prints a markdown table and writes ablation_PRESET.md and the all-rules
# program's --profile (profile_ablation_PRESET.md) to $OUT (or the work folder).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh" ablation
PRESET="${1:-qwen3-0.6b}"
MODEL="$WORK/$PRESET.gguf"
synth_model "$PRESET" || exit 1
sed -e 's/^activations:.*/activations: dequant/' "$KNOBS" >"$WORK/h200-dequant.yaml"

# The rules that fire on this model, from the census.
fired=$("$LANEC" plan "$MODEL" --knobs "$KNOBS" --census --max-ctx 512 |
  awk '$2 ~ /^[0-9]+$/ && $3 == "/" && $4 > 0 { print $1 }')
variants=("none" $fired "all")
all_held=$(echo $fired | tr ' ' ',')

build() {  # build NAME KNOBS HOLD
  local hold=()
  [[ "$3" != none ]] && hold=(--hold "$3")
  "$LANEC" plan "$MODEL" --knobs "$2" --max-ctx 512 "${hold[@]}" -o "$WORK/$1.cu" --build \
    >"$WORK/$1.log" 2>&1 || echo "build $1 failed"
}
for v in "${variants[@]}"; do
  hold="$v"; [[ "$v" == all ]] && hold="$all_held"
  build "held_$v" "$KNOBS" "$hold" &
done
build numerics_dequant "$WORK/h200-dequant.yaml" none &
wait

row() {  # row LABEL PROGRAM
  local line launches
  launches=$(grep -m1 '^// launches:' "$WORK/$2.cu" | awk '{print $3}')
  line=$("$WORK/$2" "$MODEL" --prompt-tokens "1" -n 128 --bench --repeats 3 --ignore-eos --quiet |
    grep '| tg128 |')
  echo "| $1 | $launches | $(echo "$line" | awk -F'|' '{print $7 "|" $8}') |"
}
{
  echo "| variant ($PRESET Q8_0, h200 knobs) | launches a step | ms/token | t/s |"
  echo "| --- | ---: | ---: | ---: |"
  for v in "${variants[@]}"; do
    case "$v" in none) label="all rules on" ;; all) label="all fired rules held" ;; *) label="--hold $v" ;; esac
    row "$label" "held_$v"
  done
  row "activations: dequant (all rules on)" numerics_dequant
} | tee "$DEST/ablation_$PRESET.md"
# Where the time goes with every rule on: each launch of one step timed alone.
"$WORK/held_none" "$MODEL" --prompt-tokens "1" -n 1 --profile --repeats 5 --quiet \
  >"$DEST/profile_ablation_$PRESET.md" 2>&1 || echo "profile failed"
