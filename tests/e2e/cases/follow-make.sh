# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f on GNU make: a recursive make whose recipes run spawntree nodes (and their shells and children)'
# dprobe launches make -j1 on a Makefile (written to $T) whose only
# recipe runs a second make ($(MAKE) -f sub.mk); that one makes "one"
# then "two" (prerequisites in order, -j1), whose recipes run
# "'SELF' 1 11" and "'SELF' 1 12" through the shell.  spawntree.c (see
# follow-spawntree) at level 1 runs its two level-2 children through
# sh -c: the nodes 11, 111, 112, 12, 121, 122 run one after the other,
# each calling job(ID, n) for n = 1..LEVEL+1 (ID * 10 + n, returned to
# do_jobs()): 2 + 3 + 3 + 2 + 3 + 3 = 16 calls, 32 events.  The places
# name the program by its path ({bin}:job): make and sh are images
# without it.  Processes numbered by their first event, [1] to [6] in
# that order.  make is silent (-s, @ recipes, --no-print-directory);
# the make flags of an outer make (make test) are cleared so that
# nothing runs in parallel.  On auto this must run on the in-process
# engine (make, its shells and the program all take the preload).
levels=O2	# process trees: the compiler level changes nothing there
prog=spawntree
needs='make'
defs='p:job {bin}:job id=%di:s64 n=%si:s64
r:jobr {bin}:job ret=$retval:s64'
case_run() {
	unset MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKELEVEL MAKEFILES
	printf 'all:\n\t@$(MAKE) -s --no-print-directory -f sub.mk\n' >"$T/Makefile"
	printf 'all: one two\none:\n\t@%s 1 11\ntwo:\n\t@%s 1 12\n.PHONY: all one two\n' \
		"$(shquote "$P")" "$(shquote "$P")" >"$T/sub.mk"
	DPROBE_VERBOSE=1 dp_trace -f -- make -s -j1 -C "$T" -f Makefile
}
events_by=numbered_events
case_check() {
	engine_check
}
expected() {
	p=0
	for node in 11:1 111:2 112:2 12:1 121:2 122:2; do
		id=${node%:*}
		level=${node#*:}
		p=$((p + 1))
		n=1
		while [ $n -le $((level + 1)) ]; do
			echo "[$p] spawntree job: (job+0x0/{size:job}) id=$id n=$n"
			echo "[$p] spawntree jobr: ({retsite:do_jobs:job} <- job) ret=$((id * 10 + n))"
			n=$((n + 1))
		done
	done
	for node in 11:1 111:2 112:2 12:1 121:2 122:2; do
		id=${node%:*}
		level=${node#*:}
		k=$((level + 1))
		# sum of id * 10 + n for n = 1..k
		echo "> spawntree: $id: $k jobs, sum $((id * 10 * k + k * (k + 1) / 2))"
		case $id in
		112) echo "> spawntree: 11: children ok" ;;
		122) echo "> spawntree: 12: children ok" ;;
		esac
	done
	cat <<'EOF2'
# dprobe: 32 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
