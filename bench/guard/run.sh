#!/usr/bin/env bash
# Prints what the guard costs around validation, side by side in one run:
# a guarded valid 20 KB answer through the whole gateway
# (BenchmarkGuardedValid20KB/guarded) against full validation of a 20 KB
# answer (BenchmarkValidateMCQ/20KB/full) — also when the model wrote the
# document indented, which the guard re-encodes —, and schema validation against
# the schema library's own Validate on the same document
# (BenchmarkSchemaValidate). Ratios are of the medians over COUNT runs.
#
#	bash bench/guard/run.sh          # COUNT=5
set -euo pipefail
cd "$(dirname "$0")/../.."
COUNT=${COUNT:-5}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# -bench matches each level of a sub-benchmark's name on its own, hence
# one run per benchmark.
for b in '^BenchmarkGuardedValid20KB$/^guarded ./gateway/' '^BenchmarkValidateMCQ$/^20KB$/^full$ ./validators/' \
	'^BenchmarkSchemaValidate$ ./validators/'; do
	set -- $b
	${GO:-go} test -run '^$' -count "$COUNT" -benchmem -bench "$1" "$2"
done | tee "$out" | grep -E '^Benchmark'
awk '
function median(name, field,   n, i, j, t, a) {
	n = split(vals[name, field], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") vals[name, "ns"] = vals[name, "ns"] " " $i
		if ($(i+1) == "B/op") vals[name, "B"] = vals[name, "B"] " " $i
	}
}
function ratio(label, a, b, field,   x, y) {
	x = median(a, field); y = median(b, field)
	if (y > 0) printf "%-58s %10.0f / %10.0f = %5.2fx\n", label, x, y, x / y
}
END {
	print ""
	ratio("guarded 20 KB vs full validation, bytes/op", "BenchmarkGuardedValid20KB/guarded", "BenchmarkValidateMCQ/20KB/full", "B")
	ratio("guarded 20 KB vs full validation, ns/op", "BenchmarkGuardedValid20KB/guarded", "BenchmarkValidateMCQ/20KB/full", "ns")
	ratio("guarded, model wrote it indented (a longer text), bytes/op", "BenchmarkGuardedValid20KB/guarded-pretty", "BenchmarkValidateMCQ/20KB/full", "B")
	for (s = 2; s <= 20; s *= 10) {
		ratio("schema step vs library Validate, " s " KB, ns/op", "BenchmarkSchemaValidate/" s "KB/ours", "BenchmarkSchemaValidate/" s "KB/library", "ns")
		ratio("schema step vs library Validate, " s " KB, bytes/op", "BenchmarkSchemaValidate/" s "KB/ours", "BenchmarkSchemaValidate/" s "KB/library", "B")
		ratio("parse + schema vs library decode + Validate, " s " KB, ns/op", "BenchmarkSchemaValidate/" s "KB/ours-decoded", "BenchmarkSchemaValidate/" s "KB/library-decoded", "ns")
	}
}' "$out"
