# an unknown --format: the formats there are, then the usage (exit 2)
err=$(mktemp) || exit 2
"$DPROBE" trace --format xml -e 'p:a work' -- "$EXAMPLE" 2> "$err"; echo "-> $?"
head -n 2 "$err"
rm -f "$err"
