# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# What the qemu test scripts share: their result line, skipping, and a
# scratch folder ($tmp, with $share for what the guest writes back) that
# is removed on every way out, its results copied to $QEMU_KEEP first.
# The caller sets $name ("kprobe-ref", ...) before sourcing this.

record() {
	echo "qemu $name: $1 passed, $2 failed, $3 skipped"
	if [ -n "${DPROBE_RESULTS:-}" ]; then
		echo "qemu $1 $2 $3" >>"$DPROBE_RESULTS"
	fi
}

skip() {
	echo "SKIP: qemu $name: $1"
	record 0 0 1
	exit 0
}

# scratch PREFIX: $tmp and $share, removed at exit
scratch() {
	tmp=$(mktemp -d "/tmp/$1.XXXXXX") || exit 2
	trap scratch_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	share=$tmp/share
	mkdir "$share"
}

scratch_cleanup() {
	if [ -n "${QEMU_KEEP:-}" ]; then
		mkdir -p "$QEMU_KEEP" && cp "$tmp"/share/* "$QEMU_KEEP"/ 2>/dev/null
	fi
	rm -rf "$tmp"
}
