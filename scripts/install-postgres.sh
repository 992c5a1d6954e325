#!/usr/bin/env bash
# Install Debian's postgresql for the outcome store tests (they initdb and
# start their own cluster in a temp dir, on a loopback port, as the
# postgres user when run as root). Idempotent.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1; then
	echo "[install-postgres] postgresql already installed" >&2
	exit 0
fi
exec bash "$(dirname "$0")/apt-install.sh" postgresql
