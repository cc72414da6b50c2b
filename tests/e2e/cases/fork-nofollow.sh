# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='fork, vfork and exec children without -f: only the parent is traced, children run intact'
# forkexec.c: the parent calls work(1), work(4), work(6); a fork child
# work(2) and an exec'd child work(3); a vfork+exec'd child work(5).
# Without -f only the parent's three calls are events (work(a) returns
# a * 10 + 1, into say()).  The fork child inherits the parent's memory,
# breakpoints included: they must be gone before it runs on, or its
# work(2) would die of SIGTRAP ("fork child failed").  Every process
# prints its line, in this order (the parent waits for each child).
prog=forkexec
defs='p:w work a=%di:s64
r:wr work ret=$retval:s64'
expected() {
	for a in 1 4 6; do
		echo "forkexec w: (work+0x0/{size:work}) a=$a"
		echo "forkexec wr: ({retsite:say:work} <- work) ret=$((a * 10 + 1))"
	done
	cat <<'EOF2'
> forkexec: parent work(1) = 11
> forkexec: fork work(2) = 21
> forkexec: exec work(3) = 31
> forkexec: fork child ok
> forkexec: parent work(4) = 41
> forkexec: vexec work(5) = 51
> forkexec: vfork child ok
> forkexec: parent work(6) = 61
# dprobe: 6 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
