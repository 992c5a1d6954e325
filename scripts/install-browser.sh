#!/usr/bin/env bash
# Install Debian's chromium for the dashboard's browser test (the test
# starts it headless with a temp profile). Idempotent.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
	echo "[install-browser] chromium already installed" >&2
	exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
