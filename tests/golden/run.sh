#!/bin/sh
# Golden tests: run each tests/golden/cases/NAME.sh (a dprobe command line
# using $DPROBE and $EXAMPLE) and compare its stdout+stderr and exit status
# with NAME.out.  The build directory is printed as BUILD so one expected
# file serves every build flavour.  UPDATE=1 rewrites the .out files.
set -u
DPROBE=$1
BUILD=$(dirname "$DPROBE")
EXAMPLE=$BUILD/examples/work
export DPROBE EXAMPLE
cd "$(dirname "$0")/../.." || exit 2

pass=0 fail=0
diff=$(mktemp) || exit 2
trap 'rm -f "$diff"' EXIT
for case in tests/golden/cases/*.sh; do
	name=${case%.sh}
	got=$( (sh "$case" 2>&1; echo "exit=$?") | sed "s#$BUILD/#BUILD/#g")
	if [ "${UPDATE:-0}" = 1 ]; then
		printf '%s\n' "$got" > "$name.out"
	fi
	if printf '%s\n' "$got" | diff -u "$name.out" - > "$diff"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL golden: $(basename "$name")"
		cat "$diff"
	fi
done
echo "golden: $pass passed, $fail failed, 0 skipped"
[ -n "${DPROBE_RESULTS:-}" ] && echo "golden $pass $fail 0" >> "$DPROBE_RESULTS"
[ "$fail" -eq 0 ]
