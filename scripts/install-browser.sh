#!/usr/bin/env bash
# Install Debian's chromium for the dashboard test (it starts its own,
# headless, with a temporary profile). Idempotent.
set -euo pipefail
command -v chromium >/dev/null 2>&1 || bash "$(dirname "$0")/apt-install.sh" chromium
