# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a fork child of a traced process: the tracepoints dprobe enabled are off in it'
# tpoints --fork: the child prints trace_tick_enabled() and fires
# tick(1); the parent waits for it, then does the same with tick(2).
# The in-process engine does not follow children: the child's copy of
# the agent unregisters its probe from the tracepoint (the program tests
# trace_NAME_enabled() before costly work), so the child sees 0 and its
# tick is not an event; the parent still sees 1.
prog=tpoints
engines='auto agent'
defs='tp:tick'
args='--fork'
expected() {
	cat <<'EOF2'
tpoints tick: i=2
> tpoints: child tick enabled=0
> tpoints: parent tick enabled=1
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
