#!/bin/sh
# `make run`: trace the bundled example with the seed documents' probes,
# then show what the kernel would list, an event's format, and a mistake.
set -eu
dprobe=$1
bin=$(dirname "$dprobe")/examples/work
[ -x "$bin" ] || { echo "run.sh: $bin is not built" >&2; exit 1; }

echo "== dprobe trace -e @examples/work.probes -- $bin =="
"$dprobe" trace -e @examples/work.probes --profile -- "$bin"
echo
echo "== dprobe stat -e 'p work' -- $bin =="
"$dprobe" stat -e 'p work' -- "$bin"
echo "== dprobe check -x $bin -f examples/work.probes =="
"$dprobe" check -x "$bin" -f examples/work.probes
echo
echo "== dprobe format (myprobe) =="
"$dprobe" format -x "$bin" 'p:myprobe work a=%di:s32 name=+0(%si):string'
echo
echo "== a mistake, reported as the kernel's error_log would =="
"$dprobe" check -x "$bin" 'p:myprobe work a=%di:s32 name=+0(%si:string' || true

tp=$(dirname "$dprobe")/examples/tracepoint_example
if [ -x "$tp" ]; then
	echo
	echo "== application tracepoints: dprobe list -x $tp 'shop:*' =="
	"$dprobe" list -x "$tp" 'shop:*'
	echo
	echo "== dprobe trace -e shop:order -e shop:restock -- $tp =="
	"$dprobe" trace -e shop:order -e shop:restock -- "$tp"
	echo
	echo "== dprobe format -x $tp shop:order =="
	"$dprobe" format -x "$tp" shop:order
fi
if readelf -n /usr/bin/python3.11 2>/dev/null | grep -q function__return; then
	echo
	echo "== SDT probes: python3.11's function__return =="
	"$dprobe" trace -e 'p:pyret sdt_python:function__return file=+0($arg1):string func=+0($arg2):string line=$arg3' \
		--filter 'pyret=func=="fib"' -- /usr/bin/python3.11 -S -E -c '
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(4))'
fi
# As trace-cmd does: as root, mount tracefs where the kernel expects it
# when it is not mounted yet (nothing mounts it on a fresh boot).
tracefs=/sys/kernel/tracing
if [ "$(id -u)" = 0 ] && [ -d $tracefs ] &&
   ! grep -q "^[^ ]* $tracefs tracefs " /proc/mounts; then
	mount -t tracefs nodev $tracefs && echo && echo "(mounted tracefs on $tracefs)"
fi
if [ "$(id -u)" = 0 ] && [ -e $tracefs/uprobe_events ]; then
	echo
	echo "== the same probes through the host kernel's uprobe_events (--engine kernel) =="
	"$dprobe" trace --engine kernel -e @examples/work.probes -- "$bin"
	echo
	echo "== a kernel tracepoint: dprobe stat --kernel -e syscalls:sys_enter_openat -- cat /etc/hostname =="
	"$dprobe" stat --kernel -e syscalls:sys_enter_openat -- cat /etc/hostname ||
		true	# a kernel without syscall tracepoints says why
else
	echo
	echo "(--engine kernel skipped: it needs root and tracefs with uprobe_events;" \
		"docs/kernel-engine.md)"
fi
