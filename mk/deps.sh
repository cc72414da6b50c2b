#!/bin/sh
# Make sure the Debian packages dprobe builds and tests with are present.
# As root, missing ones are installed with apt-get; otherwise the script
# names them and fails, so the build never half-works.
set -eu

PKGS="gcc make pkg-config clang libelf-dev libdw-dev libzydis-dev libcriterion-dev libfuse3-dev fuse3"
[ "${1:-}" = "--test" ] && PKGS="$PKGS libc6-dbg libclang-rt-14-dev binutils systemtap-sdt-dev valgrind qemu-system-x86 cpio xz-utils man-db"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

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
