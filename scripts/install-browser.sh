#!/usr/bin/env bash
# Install Debian's chromium for the dashboard test (it starts its own,
# headless, with a temporary profile). Idempotent.
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
command -v chromium >/dev/null 2>&1 || ($SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium)
