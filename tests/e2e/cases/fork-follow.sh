# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='-f follows fork, vfork and exec children'
# As fork-nofollow, with -f: all six calls work(1)..work(6) are events,
# in that order (each process waits for the previous one), each followed
# by its return.  The exec'd children run the same program again, so the
# probes are re-resolved in the new image; all processes are named
# "forkexec".
prog=forkexec
opts=-f
defs='p:w work a=%di:s64
r:wr work ret=$retval:s64'
expected() {
	for a in 1 2 3 4 5 6; do
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
# dprobe: 12 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
