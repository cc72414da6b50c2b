# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='PATH:OFFSET(REF) whose counter cannot take 1 more is refused, by both engines'
# tpoints.c's tp_neg_sem, in a writable section as SDT semaphores are,
# holds 0xfffe: as a short, -2.  The kernel adds 1 to a uprobe's counter
# only if the result is not negative (__update_ref_ctr: EINVAL), and
# the probe is then not registered.  Both engines refuse it when they
# arm the probe, with the value in the message, and dprobe exits 1.
# (Whether the program prints its line before dprobe kills it depends
# on timing, so its output is not compared.)
prog=tpoints
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
defs='p:w {bin}:{off:tick_once}({off:tp_neg_sem}) i=%di:s32'
args='--once 3'
case_result() {
	grep -c 'reference counter .* holds -2 (0xfffe): adding 1 leaves it negative' \
		"$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
1
# exit=1
EOF2
}
