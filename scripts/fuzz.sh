#!/usr/bin/env bash
# Run every fuzz target of the module in turn for FUZZTIME each (default
# 10s), then print each target's execs. Targets are found with
# `go test -list`, so a new one is run without editing this file.
#
#   FUZZTIME=30s bash scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10s}"
GO="${GO:-go}"
summary=()
failed=0
for pkg in $($GO list ./...); do
	targets=$($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)
	for name in $targets; do
		log=$(mktemp)
		if $GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
			status=ok
		else
			status=FAIL
			failed=1
			cat "$log"
		fi
		# The last progress line says how many inputs ran.
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
		summary+=("$(printf '%-4s %-60s %12s' "$status" "${pkg#github.com/contractgateway/gateway/}.$name" "${execs:-?}")")
		rm -f "$log"
	done
done
printf '%-4s %-60s %12s\n' "" "target" "execs"
printf '%s\n' "${summary[@]}"
echo "${#summary[@]} fuzz targets, ${FUZZTIME} each"
exit $failed
