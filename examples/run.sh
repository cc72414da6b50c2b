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
