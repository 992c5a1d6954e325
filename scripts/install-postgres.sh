#!/usr/bin/env bash
# Install Debian's postgresql for the outcome store tests (they initdb and
# start their own cluster in a temp dir, on a loopback port, as the
# postgres user when run as root). Idempotent.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1; then
	echo "[install-postgres] postgresql already installed" >&2
	exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
