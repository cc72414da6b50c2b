# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='deliberate differences: immediate strings, faulting inner dereference'
# docs/differences.md: \"STR" records the string itself (the kernel
# prints (fault) on uprobes), and a number whose intermediate dereference
# faults records 0 (the kernel leaves stale bytes).  %cx = NULL at
# take_rec's entry, so +0(+0(%cx)) faults at the inner read.  A string
# array at NULL: both element pointers fault, so both are (fault) (the
# kernel prints {(fault),""}: its second element is left over from the
# first.)
prog=args
defs='p:diff take_rec imm=\"immediate":string inner=+0(+0(%cx)):x64 inner8=+8(+0(%cx)):s8 nuls=+0(%cx):string[2]'
expected() {
	cat <<'EOF2'
args diff: (take_rec+0x0/{size:take_rec}) imm="immediate" inner=0x0 inner8=0 nuls={(fault),(fault)}
> args: ok
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
