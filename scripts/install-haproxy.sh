#!/usr/bin/env bash
# Install Debian's haproxy for the topology test (it starts its own on a
# loopback port in front of three gateways, with deploy/haproxy.cfg).
# Idempotent.
set -euo pipefail
if command -v haproxy >/dev/null 2>&1; then
	echo "[install-haproxy] haproxy already installed" >&2
	exit 0
fi
exec bash "$(dirname "$0")/apt-install.sh" haproxy
