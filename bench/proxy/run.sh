#!/usr/bin/env bash
# Pass-through benchmark: the gateway next to a bare httputil.ReverseProxy
# and the upstream itself, on loopback, in one run; prints added latency,
# time to first streamed byte, memory with idle streams, and ratios.
#
# Usage: bench/proxy/run.sh [-n 20000] [-c 20] [-rounds 5] [-seq 500] [-idle 1000] [-timeout 10m]
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v hey >/dev/null 2>&1; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get install -y hey || { $sudo apt-get update && $sudo apt-get install -y hey; }
fi

# 1,000 held streams take about 2,000 descriptors in a proxy.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gateway" ./cmd/gateway
go build -o "$tmp/bench-proxy" ./bench/proxy
"$tmp/bench-proxy" -gateway "$tmp/gateway" -hey "$(command -v hey)" "$@"
