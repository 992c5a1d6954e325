#!/usr/bin/env bash
# Install Debian's redis-server for the cache tests (they start their own
# on a loopback port). Idempotent.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
	echo "[install-redis] redis-server already installed" >&2
	exit 0
fi
exec bash "$(dirname "$0")/apt-install.sh" redis-server
