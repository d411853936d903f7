#!/bin/sh
# The image's entry point (under tini, which forwards SIGTERM): installs what the enabled operations need into
# VOXD_MODELS_DIR (from VOXD_MODELS_ARCHIVE when given, else pulled; models already there are only checked), then
# becomes the server, so the server itself receives the signals. Arguments replace the server: `voxd models list`, ...
set -eu
cd /opt/voxd
# A data volume this user cannot write (root-owned: a host directory, or a claim where the cluster applies no fsGroup)
# is named here, with what to do, rather than left to the first EACCES deep in a start-up stack.
data="${VOXD_DATA_DIR:-/var/lib/voxd/data}"
mkdir -p "$data" 2>/dev/null || true
if [ ! -w "$data" ]; then
  echo "voxd: the data directory $data (VOXD_DATA_DIR) is not writable by uid $(id -u) gid $(id -g):" \
    "mount a volume that this user or group can write (Kubernetes: securityContext.fsGroup $(id -g))" >&2
  exit 1
fi
if [ "$#" -gt 0 ]; then exec node dist/src/cli/main.js "$@"; fi
if [ -n "${VOXD_MODELS_ARCHIVE:-}" ]; then node dist/src/cli/main.js models import "$VOXD_MODELS_ARCHIVE"; fi
node dist/src/cli/main.js models pull --needed
exec node dist/src/main.js
