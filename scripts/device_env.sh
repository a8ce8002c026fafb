# shellcheck shell=bash
# Source this on the GPU machine (bash): `source scripts/device_env.sh`.
#
# The GPU machine has nvcc, cmake and python3 but none of the Debian -dev
# packages lanec builds against, and no network. scripts/fetch_device_deps.sh
# (run on the build machine) downloads their .deb files into .deps/debs/; the
# working tree is copied there with .deps/debs. This file unpacks them into
# .deps/prefix/ (never into /: no root, no package database), rewrites the
# absolute /usr paths in their pkg-config files to the prefix, and exports
#   CMAKE_PREFIX_PATH  so find_package(CLI11|spdlog|fmt|yaml-cpp|nlohmann_json)
#                      finds the (relocatable) CMake configs in the prefix
#   PKG_CONFIG_PATH    so pkg_check_modules(libpcre2-8) finds the fixed .pc
#   PATH               + the prefix's pkg-config, only if the machine has none
#   LD_LIBRARY_PATH    so lanec, the tests and pkgconf find the shared libraries
#   LIBRARY_PATH, CPATH  for direct compiler use (e.g. nvcc on an emitted .cu)
#   LANEC_CMAKE_ARGS   explicit -D<Pkg>_DIR=... flags, should CMake's search miss
# After it: cmake -S . -B build $LANEC_CMAKE_ARGS && cmake --build build -j
# Unpacking happens once per prefix location; sourcing again only re-exports.

lanec_device_env() {
  local root debs prefix usr multiarch stamp_text deb pc pkg_config
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  debs="$root/.deps/debs"
  prefix="$root/.deps/prefix"
  usr="$prefix/usr"
  multiarch="x86_64-linux-gnu"

  if ! ls "$debs"/*.deb >/dev/null 2>&1; then
    echo "device_env: no .deb files in $debs; run scripts/fetch_device_deps.sh on the build" \
      "machine and carry .deps/debs" >&2
    return 1
  fi

  # Re-unpack when the set of packages or the prefix's location changed (the
  # .pc files hold absolute paths into the prefix).
  stamp_text="$prefix"
  for deb in "$debs"/*.deb; do stamp_text+=" ${deb##*/}"; done
  if [[ ! -f "$prefix/.stamp" || "$(cat "$prefix/.stamp")" != "$stamp_text" ]]; then
    rm -rf "$prefix"
    mkdir -p "$prefix"
    for deb in "$debs"/*.deb; do
      lanec_unpack_deb "$deb" "$prefix" || return 1
    done
    for pc in "$usr"/lib/"$multiarch"/pkgconfig/*.pc "$usr"/share/pkgconfig/*.pc; do
      [[ -f "$pc" ]] || continue
      sed -i -e "s|^prefix=/usr\$|prefix=$usr|" -e "s|=/usr/|=$usr/|g" "$pc"
    done
    printf '%s' "$stamp_text" >"$prefix/.stamp"
  fi

  lanec_check_glibc

  export CMAKE_PREFIX_PATH="$usr:$usr/lib/$multiarch/cmake:$usr/share/cmake${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export PKG_CONFIG_PATH="$usr/lib/$multiarch/pkgconfig:$usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LIBRARY_PATH="$usr/lib/$multiarch${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export CPATH="$usr/include${CPATH:+:$CPATH}"
  if ! command -v pkg-config >/dev/null 2>&1; then
    export PATH="$usr/bin:$PATH"
  fi
  if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  pkg_config="$(command -v pkg-config)"
  export LANEC_CMAKE_ARGS="-DCLI11_DIR=$usr/share/cmake/CLI11 \
-Dnlohmann_json_DIR=$usr/share/cmake/nlohmann_json \
-Dspdlog_DIR=$usr/lib/$multiarch/cmake/spdlog -Dfmt_DIR=$usr/lib/$multiarch/cmake/fmt \
-Dyaml-cpp_DIR=$usr/lib/$multiarch/cmake/yaml-cpp -DCATCH2_INCLUDE_DIR=$usr/include \
-DPKG_CONFIG_EXECUTABLE=$pkg_config"
  echo "device_env: dependencies in $usr (pkg-config: $pkg_config)" >&2
}

# dpkg -x where dpkg exists; otherwise python3 reads the ar archive and its
# data.tar.* (xz, gz, bz2 or zstd if the python has it) itself.
lanec_unpack_deb() {
  local deb="$1" prefix="$2"
  if command -v dpkg-deb >/dev/null 2>&1; then
    dpkg-deb -x "$deb" "$prefix" && return 0
    echo "device_env: dpkg-deb -x failed on $deb" >&2
    return 1
  fi
  python3 - "$deb" "$prefix" <<'PY' || { echo "device_env: cannot unpack $1" >&2; return 1; }
import io, sys, tarfile
deb, prefix = sys.argv[1], sys.argv[2]
with open(deb, "rb") as f:
    blob = f.read()
assert blob[:8] == b"!<arch>\n", "not an ar archive"
pos = 8
while pos + 60 <= len(blob):
    header = blob[pos:pos + 60]
    name = header[:16].decode().strip().rstrip("/")
    size = int(header[48:58].decode().strip())
    body = blob[pos + 60:pos + 60 + size]
    pos += 60 + size + (size & 1)
    if name.startswith("data.tar"):
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as tar:
            tar.extractall(prefix)
        break
else:
    sys.exit("no data.tar member in " + deb)
PY
}

# The packages come from Debian 12 and need glibc >= 2.34.
lanec_check_glibc() {
  local version
  version="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
  [[ -n "$version" ]] || return 0
  if [[ "$(printf '%s\n2.34\n' "$version" | sort -V | head -1)" != "2.34" ]]; then
    echo "device_env: warning: glibc $version is older than 2.34, which the Debian 12" \
      "libraries need; linking or running may fail" >&2
  fi
}

lanec_device_env
