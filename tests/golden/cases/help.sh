"$DPROBE" --help
"$DPROBE" help format
