# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='without -f: 4 forked workers inherit the probes, make 10000 calls on them, record nothing'
# prefork.c (see follow-prefork): the parent calls handle(0) once, then
# its 4 workers call handle(k) 10000 times in all, through the copy of
# the parent's probed code each fork child inherits (int3s for the
# ptrace engine, jumps to the agent's detours and its rings, shared
# memory, for the in-process engine).  Without -f only the parent's
# call is an event (entry, return 0 into main); the workers must run
# unchanged (each checks the sum of its returns: "worker k: ok") and
# nothing of theirs may reach the parent's rings.  On auto this runs on
# the in-process engine.
levels=O2	# process trees: the compiler level changes nothing there
prog=prefork
defs='p:req handle k=%di:s64
r:reqr handle ret=$retval:s64'
case_run() {
	DPROBE_VERBOSE=1 dp_trace -- "$P"
}
case_check() {
	engine_check
}
expected() {
	cat <<'EOF2'
prefork req: (handle+0x0/{size:handle}) k=0
prefork reqr: ({retsite:main:handle} <- handle) ret=0
> prefork: 4 workers
> prefork: worker 1: ok
> prefork: worker 2: ok
> prefork: worker 3: ok
> prefork: worker 4: ok
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
