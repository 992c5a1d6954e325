#!/usr/bin/env bash
# Installs the npm clients (ollama, openai, @anthropic-ai/sdk, ai with
# ollama-ai-provider-v2, @langchain/ollama) that the real-client tests drive
# against the gateway, at the versions package-lock.json pins (all run on
# Node 20). Idempotent; node_modules stays out of git.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/gateway/testdata/node"
[ -f "$dir/package.json" ] || exit 0
cd "$dir"
installed=1
for pkg in ollama openai @anthropic-ai/sdk ai ollama-ai-provider-v2 @langchain/ollama @langchain/core zod; do
  [ -f "node_modules/$pkg/package.json" ] || installed=0
done
if [ "$installed" = 1 ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
  exit 0
fi
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
