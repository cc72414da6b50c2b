#!/bin/sh
# Make sure the Debian packages dprobe builds and tests with are present.
# As root, missing ones are installed with apt-get; otherwise the script
# names them and fails, so the build never half-works.
set -eu

PKGS="gcc make pkg-config clang libelf-dev libdw-dev libzydis-dev libcriterion-dev libfuse3-dev fuse3 libzstd-dev"
[ "${1:-}" = "--test" ] && PKGS="$PKGS libc6-dbg libclang-rt-14-dev binutils systemtap-sdt-dev valgrind qemu-system-x86 cpio xz-utils man-db"

# The kernel's own ftrace selftests (tests/ftrace/run.sh) come from its
# source package, and the flame graph's headless-browser test
# (tests/e2e/cases/flamegraph-browser.sh) needs Chromium (about 25 s to
# install), --format ctf's (tests/e2e/cases/ctf.sh) reads the trace
# with babeltrace2, and dprobe record's (tests/e2e/cases/record.sh) reads
# the recording with trace-cmd too: wanted, not needed (those tests
# skip, saying why).
OPTIONAL=""
[ "${1:-}" = "--test" ] && OPTIONAL="linux-source-6.12 chromium babeltrace2 trace-cmd uftrace"

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"
}

optional() {
	[ "$(id -u)" -eq 0 ] || return 0
	for p in $OPTIONAL; do
		installed "$p" && continue
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "$p" >/dev/null 2>&1 ||
			echo "dprobe: could not install $p (optional: the" \
				"tests that need it skip)" >&2
	done
}

missing=""
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	optional
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "dprobe: missing Debian packages:$missing" >&2
	echo "dprobe: install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "dprobe: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
optional
