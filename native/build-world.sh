#!/usr/bin/env bash
# Builds the WORLD vocoder (modified-BSD C++, by M. Morise) as voxd's Node-API addon `world.node`.
# WORLD's sources come from the PyPI sdist of pyworld (which ships them under lib/World), fetched with pip and
# verified by sha256; they are never committed here. Only our binding (native/world/addon.cc) lives in the repo.
# Output: native/build/world.node (path printed on stdout), beside the whisper addon, where src/audio/world.ts looks.
# The build itself is kept in ${VOXD_CACHE_DIR:-$HOME/.cache/voxd}/build/world/node<abi>/ and reused by every checkout
# while the WORLD version and the binding source are unchanged.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${VOXD_CACHE_DIR:-$HOME/.cache/voxd}/build"
version=0.3.5
sha256=1b93e53cddb67a0e4faa34d6cf919ac6c662feb1c8c0ed901d71b595ab396aa3
abi="$(node -p process.versions.modules)"
stamp="pyworld-$version $(sha256sum "$here/world/addon.cc" | cut -d' ' -f1)"
out="$cache/world/node$abi"
installed="$here/build/world.node"
install_addon() {
  mkdir -p "$here/build"
  cp "$out/world.node" "$installed.tmp" && mv "$installed.tmp" "$installed"
  cp "$out/WORLD-LICENSE.txt" "$here/build/WORLD-LICENSE.txt"
  echo "$installed"
}
if [ -f "$out/world.node" ] && [ "$(cat "$out/build.id" 2>/dev/null)" = "$stamp" ]; then install_addon; exit 0; fi
mkdir -p "$cache/pyworld"
sdist="$cache/pyworld/pyworld-$version.tar.gz"

if [ ! -f "$sdist" ] || [ "$(sha256sum "$sdist" | cut -d' ' -f1)" != "$sha256" ]; then
  # pip prepares an sdist's metadata even for a download, and pyworld's setup imports numpy and Cython:
  # give pip a private environment with those (wheels only) instead of touching the system's Python.
  venv="$cache/pip-env"
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check --only-binary :all: setuptools wheel numpy cython >&2
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: --no-build-isolation \
    -d "$cache/pyworld" "pyworld==$version" >&2
fi
got="$(sha256sum "$sdist" | cut -d' ' -f1)"
if [ "$got" != "$sha256" ]; then echo "pyworld-$version.tar.gz: sha256 $got, expected $sha256" >&2; exit 1; fi

src="$cache/pyworld/pyworld-$version/lib/World/src"
[ -d "$src" ] || tar -xzf "$sdist" -C "$cache/pyworld"
# The running Node's headers (those of the pinned runtime when scripts/node-env.sh installed one).
node_headers="${VOXD_NODE_HEADERS:-$(dirname "$(dirname "$(command -v node)")")/include/node}"
[ -f "$node_headers/node_api.h" ] || { echo "node_api.h not found (set VOXD_NODE_HEADERS)" >&2; exit 1; }

tmp="$out.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
# Two compilers at a time: the machines have two cores shared with other work.
printf '%s\n' cheaptrick common d4c dio fft harvest matlabfunctions stonemask synthesis |
  xargs -P 2 -I{} nice g++ -O3 -fPIC -std=c++11 -I"$src" -c "$src/{}.cpp" -o "$tmp/{}.o"
nice g++ -O3 -fPIC -std=c++17 -I"$src" -I"$node_headers" -DNODE_GYP_MODULE_NAME=world -c "$here/world/addon.cc" -o "$tmp/addon.o"
g++ -shared -o "$tmp/world.node" "$tmp"/*.o
cp "$src/../LICENSE.txt" "$tmp/WORLD-LICENSE.txt"
rm -f "$tmp"/*.o
echo "$stamp" > "$tmp/build.id"
rm -rf "$out" && mkdir -p "$(dirname "$out")" && mv "$tmp" "$out"
install_addon
