#!/usr/bin/env bash
# Install Debian's redis-server for the cache tests (they start their own
# on a loopback port). Idempotent.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
	echo "[install-redis] redis-server already installed" >&2
	exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server
