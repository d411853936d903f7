#!/bin/sh
# The image's entry point (under tini, which forwards SIGTERM): installs what the enabled operations need into
# VOXD_MODELS_DIR (from VOXD_MODELS_ARCHIVE when given, else pulled; models already there are only checked), then
# becomes the server, so the server itself receives the signals. Arguments replace the server: `voxd models list`, ...
set -eu
cd /opt/voxd
if [ "$#" -gt 0 ]; then exec node dist/src/cli/main.js "$@"; fi
if [ -n "${VOXD_MODELS_ARCHIVE:-}" ]; then node dist/src/cli/main.js models import "$VOXD_MODELS_ARCHIVE"; fi
node dist/src/cli/main.js models pull --needed
exec node dist/src/main.js
