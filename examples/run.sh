#!/bin/sh
# `make run`: check the example's probe definitions against the example
# program and show what the kernel would list and the event formats.
set -eu
dprobe=$1
bin=$(dirname "$dprobe")/examples/work
[ -x "$bin" ] || { echo "run.sh: $bin is not built" >&2; exit 1; }

echo "== the example program =="
"$bin"
echo
echo "== dprobe check -x $bin -f examples/work.probes =="
"$dprobe" check -x "$bin" -f examples/work.probes
echo
echo "== dprobe format (myprobe) =="
"$dprobe" format -x "$bin" 'p:myprobe work a=%di:s32 name=+0(%si):string'
echo
echo "== a mistake, reported as the kernel's error_log would =="
"$dprobe" check -x "$bin" 'p:myprobe work a=%di:s32 name=+0(%si:string' || true
