# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='in-process engine: a program that unmaps the agent'"'"'s rings runs intact; dprobe names it, its later hits are not recorded'
# unmap.c: work(1), then munmap() of every mapping named dprobe-rings,
# then work(2), work(3).  The agent sees the munmap() before it happens
# (it stands in front of the C library's), stops recording, and tells
# dprobe, which says so: work(1) is the only event, and the program's
# output is whole (no fault at the next hit).
prog=unmap
levels=O2
engines='auto agent'
defs='p:w {bin}:work a=%di:s64'
case_check() {
	grep -q "unmapped the agent's rings" "$T/stderr" && return 0
	echo "dprobe did not name the process that unmapped its rings"
	return 1
}
expected() {
	cat <<'EOF2'
unmap w: (work+0x0/{size:work}) a=1
> unmap: work(1) = 11
> unmap: work(2) = 21
> unmap: work(3) = 31
> unmap: done
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
