#!/usr/bin/env bash
# Fuzzes the GGUF reader for SECONDS (default 60): builds fuzz/gguf_reader_fuzz
# with clang (libFuzzer + ASan + UBSan, leak detection on) in build-fuzz/ and
# runs it on a scratch copy of the committed seed corpus fuzz/corpus/gguf_reader/.
# Exits non-zero on any crash, sanitizer report, leak or timeout; the failing
# input is saved under build-fuzz/artifacts/.
#   usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LANEC_FUZZ_BUILD:-$root/build-fuzz}"

cxx="$(command -v clang++ || command -v clang++-14 || true)"
if [[ -z "$cxx" ]]; then
  echo "fuzz.sh: clang++ not found (install clang and libclang-rt-dev)" >&2
  exit 1
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DLANEC_FUZZ=ON -DLANEC_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target gguf_reader_fuzz -j "${LANEC_FUZZ_JOBS:-2}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$build/artifacts"
cp "$root"/fuzz/corpus/gguf_reader/* "$work/corpus/"

echo "fuzz.sh: fuzzing the GGUF reader for ${seconds}s" >&2
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=0" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  "$build/fuzz/gguf_reader_fuzz" "$work/corpus" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -dict="$root/fuzz/gguf.dict" -artifact_prefix="$build/artifacts/" -print_final_stats=1
echo "fuzz.sh: no findings in ${seconds}s" >&2
