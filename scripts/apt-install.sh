#!/usr/bin/env bash
# Install Debian packages with apt-get, through sudo unless run as root:
# what the install-*.sh scripts do once they found their tool missing.
#
#	bash scripts/apt-install.sh PACKAGE...
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
