"$DPROBE" check -x "$EXAMPLE" -f examples/work.probes
