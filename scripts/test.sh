#!/usr/bin/env bash
# Command two of the README (and all of CI): install, build, run every test.
#   1. the Catch2 suite (unit, golden and error tests) through ctest
#   2. the GGUF reader fuzzer for a bounded time under ASan + UBSan
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
lanec_build
(cd "$LANEC_BUILD" && ctest --output-on-failure)
bash "$LANEC_ROOT/scripts/fuzz.sh" "${LANEC_FUZZ_SECONDS:-60}"
