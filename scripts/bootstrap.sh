#!/usr/bin/env bash
# Installs the Debian packages lanec needs (the test fixtures are committed;
# the scripts that regenerate them use the PyPI `gguf` package, which is not
# needed to build or test), then configures and builds into build/.
# Idempotent: a second run installs nothing and rebuilds only what changed.
# Sourced by demo.sh and test.sh.
set -euo pipefail
LANEC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LANEC_BUILD="${LANEC_BUILD:-$LANEC_ROOT/build}"

lanec_packages=(build-essential cmake pkg-config libcli11-dev libspdlog-dev libfmt-dev
  libyaml-cpp-dev catch2 libpcre2-dev nlohmann-json3-dev clang libclang-rt-dev python3)

lanec_install_packages() {
  local missing=()
  for p in "${lanec_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "lanec: installing ${missing[*]}" >&2
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

lanec_find_nvcc() {
  if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
}

lanec_build() {
  local jobs
  jobs="$(nproc)"
  cmake -S "$LANEC_ROOT" -B "$LANEC_BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$LANEC_BUILD" -j "$jobs" "$@"
}

lanec_install_packages
lanec_find_nvcc
