#!/usr/bin/env bash
# Installs the official npm clients (ollama, openai) that the real-client
# tests drive against the gateway. Idempotent; node_modules stays out of git.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/gateway/testdata/node"
[ -f "$dir/package.json" ] || exit 0
cd "$dir"
if [ -d node_modules/ollama ] && [ -d node_modules/openai ]; then
  exit 0
fi
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
