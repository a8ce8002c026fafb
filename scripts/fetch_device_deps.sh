#!/usr/bin/env bash
# Run HERE (the Debian 12 build machine, with network), not on the GPU machine.
# Downloads the .deb files of every library lanec's build needs into
# .deps/debs/ (git-ignored), to be copied with the working tree to the GPU
# machine, which has nvcc, cmake and python but no Debian -dev packages and no
# network. There, scripts/device_env.sh unpacks them into a private prefix.
#
# What each package is for (checked with dpkg -L / dpkg -s Depends):
#   libcli11-dev              CLI11 headers + CMake config (header-only)
#   libspdlog-dev libspdlog1.10  spdlog headers, CMake config, shared library;
#                             built with SPDLOG_FMT_EXTERNAL, so it needs fmt:
#   libfmt-dev libfmt9        fmt headers, CMake config, shared library
#   libyaml-cpp-dev libyaml-cpp0.7  yaml-cpp headers, CMake config, library
#   catch2                    Catch2 v2 single header (tests)
#   nlohmann-json3-dev        nlohmann_json headers + CMake config
#   libpcre2-dev libpcre2-8-0 PCRE2 headers, libpcre2-8.pc, library
#   pkgconf pkgconf-bin libpkgconf3  a pkg-config binary, used only when the
#                             GPU machine has none (CMake's FindPkgConfig
#                             needs one for PCRE2)
# libpcre2-dev also ships .so links for the 16/32-bit and POSIX variants; we
# leave their runtime packages out, as lanec links only libpcre2-8.
# The runtime libraries need glibc >= 2.34 and libstdc++ from GCC >= 12
# (Debian 12 / Ubuntu 22.04 or newer); device_env.sh checks glibc.
set -euo pipefail
LANEC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEBS="$LANEC_ROOT/.deps/debs"

packages=(libcli11-dev libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  libyaml-cpp-dev libyaml-cpp0.7 catch2 nlohmann-json3-dev
  libpcre2-dev libpcre2-8-0 pkgconf pkgconf-bin libpkgconf3)

# The pinned versions are the ones installed here, so that the GPU machine
# builds against exactly the headers this machine's tests ran with.
versioned=()
for p in "${packages[@]}"; do
  version="$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)"
  if [[ -n "$version" ]]; then versioned+=("$p=$version"); else versioned+=("$p"); fi
done

rm -rf "$DEBS"
mkdir -p "$DEBS"
cd "$DEBS"
# apt-get download writes into the current directory; as root it warns that
# the _apt user cannot write there, which is harmless.
apt-get download "${versioned[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true
shopt -s nullglob
fetched=(./*.deb)
count="${#fetched[@]}"
if [[ "$count" -ne "${#packages[@]}" ]]; then
  echo "fetch_device_deps: expected ${#packages[@]} .deb files in $DEBS, got $count" >&2
  exit 1
fi
echo "fetch_device_deps: $count packages ($(du -sh . | cut -f1)) in $DEBS"

# The GPU machine's python has torch and transformers but not the `gguf`
# package that scripts/compare_transformers.py reads models with: a wheel.
WHL="$LANEC_ROOT/.deps/whl"
mkdir -p "$WHL"
python3 -m pip download -q --no-deps --only-binary=:all: -d "$WHL" gguf==0.19.0
echo "fetch_device_deps: $(ls "$WHL") in $WHL"
