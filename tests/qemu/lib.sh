# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# What the qemu test scripts share beyond tests/lib.sh: the suite "qemu
# NAME" (recorded as "qemu P F S"), and a scratch folder ($tmp, with
# $share for what the guest writes back) whose results are copied to
# $QEMU_KEEP before it is removed.  The caller sets $name ("kprobe-ref",
# ...) and $here (tests/qemu) before sourcing this.

# shellcheck disable=SC2154  # $here and $name: the caller's
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
t_begin "qemu $name" qemu

# scratch PREFIX: $tmp and $share, removed at exit
scratch() {
	t_scratch "$1"
	T_AT_EXIT=keep_share
	tmp=$T_DIR
	share=$tmp/share
	mkdir "$share"
}

keep_share() {
	if [ -n "${QEMU_KEEP:-}" ]; then
		mkdir -p "$QEMU_KEEP" && cp "$tmp"/share/* "$QEMU_KEEP"/ 2>/dev/null
	fi
}
