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
# shellcheck source=tests/lib.sh
. tests/lib.sh

t_begin golden
T_TAG=golden
T_UPDATE=${UPDATE:-0}
t_scratch dprobe-golden
for case in tests/golden/cases/*.sh; do
	name=${case%.sh}
	(sh "$case" 2>&1; echo "exit=$?") >"$T_DIR/got"
	if t_check "$name.out" "$T_DIR/got" sed "s#$BUILD/#BUILD/#g" >"$T_DIR/diff"; then
		t_pass "$(basename "$name")"
	else
		t_fail "$(basename "$name")"
		cat "$T_DIR/diff"
	fi
done
t_end
