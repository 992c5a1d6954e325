#!/usr/bin/env bash
# Runs every fuzz target of the module in turn, FUZZTIME each (default 10s).
# Targets are discovered per package with `go test -list '^Fuzz'`, so a new
# target is picked up without editing this file. Prints, per target, the
# execs the fuzzer reported, a summary table at the end, and exits non-zero
# if any target failed (its output and the failing input are shown). A bare
# "context deadline exceeded" at the end of -fuzztime with no failing input
# is Go's coordinator race (go.dev/issue/75804), noted but not a failure.
#
# FUZZMINIMIZETIME (default 2s) bounds the minimizing of each new input: at
# Go's default of 60s a short run of a target with large seeds (FuzzLocal)
# spends its whole FUZZTIME minimizing its first new input.
#
# Usage: FUZZTIME=30s scripts/fuzz.sh [packages...]   (default ./...)
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Packages with test files; only those whose test files declare a Fuzz
# function are asked for their list (which compiles the test binary).
mapfile -t dirs < <($GO list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' "${pkgs[@]}")
names=() results=() failed=0 start=$SECONDS
for dir in "${dirs[@]}"; do
	[ -n "$dir" ] || continue
	grep -qs '^func Fuzz' "$dir"/*_test.go || continue
	rel=./${dir#"$PWD"/}
	[ "$dir" != "$PWD" ] || rel=.
	if ! list=$($GO test -list '^Fuzz' "$rel" 2>&1); then
		echo "$list"
		echo "FAIL listing $rel"
		names+=("$rel (list)") results+=("FAIL") failed=1
		continue
	fi
	for name in $(grep '^Fuzz' <<<"$list"); do
		echo "=== $rel $name (fuzztime $FUZZTIME)"
		t0=$SECONDS
		$GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$rel" >"$log" 2>&1
		rc=$?
		execs=$(sed -n 's/.*fuzz: elapsed: [^,]*, execs: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
		execs=${execs:-0}
		if [ $rc -ne 0 ] && ! grep -q 'Failing input written' "$log" &&
			grep -q '^--- FAIL: '"$name"' ' "$log" && grep -q '^    context deadline exceeded$' "$log" &&
			[ "$(grep -c '^--- FAIL' "$log")" -eq 1 ]; then
			# Go's fuzz coordinator can report its own -fuzztime deadline as
			# a failure, with no failing input (go.dev/issue/75804, fixed in
			# Go 1.27): counted, not failed.
			echo "--- ok   $rel $name: execs $execs, $((SECONDS - t0))s (coordinator deadline race, go.dev/issue/75804; no failing input)"
			results+=("$execs (deadline race)")
		elif [ $rc -ne 0 ]; then
			cat "$log"
			echo "--- FAIL $rel $name: execs $execs, $((SECONDS - t0))s"
			results+=("FAIL ($execs execs)") failed=1
		else
			echo "--- ok   $rel $name: execs $execs, $((SECONDS - t0))s"
			results+=("$execs")
		fi
		names+=("$rel $name")
	done
done

echo
printf '%-50s %s\n' "target" "execs"
for i in "${!names[@]}"; do
	printf '%-50s %s\n' "${names[$i]}" "${results[$i]}"
done
echo "${#names[@]} targets, fuzztime $FUZZTIME each, $((SECONDS - start))s in all"
if [ ${#names[@]} -eq 0 ]; then
	echo "no fuzz targets found"
	exit 1
fi
exit $failed
