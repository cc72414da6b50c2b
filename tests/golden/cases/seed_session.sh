# The default MAXACTIVE of a return probe depends on the CPU count (r10: up
# to 5 CPUs, as register_kretprobe() does): printed as rN: here.
out=$("$DPROBE" check -x "$EXAMPLE" -f examples/work.probes)
rc=$?
printf '%s\n' "$out" | sed 's/^r[0-9][0-9]*:/rN:/'
exit $rc
