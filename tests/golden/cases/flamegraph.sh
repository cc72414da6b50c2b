# dprobe flamegraph: the frames of folded stacks (names, counts, places),
# hostile names escaped, and the refusals (nothing written on error)
IN=$(mktemp -d)
printf '%s\n' 'main;outer;middle;leaf 3' 'main;other 1' '' 'start;main;a<b>&"c 2' \
	>"$IN/in.folded"
"$DPROBE" flamegraph --width 620 --title 'work <stacks>' "$IN/in.folded" |
	grep -E '^<g class="f">|id="title"'
echo "-> $?"
printf 'main;work 2\nmain;work\n' | "$DPROBE" flamegraph -o "$IN/bad.svg"
echo "-> $? $(ls "$IN")"
printf 'main 99999999999999999999\n' | "$DPROBE" flamegraph >/dev/null
echo "-> $?"
"$DPROBE" flamegraph --width 100 "$IN/in.folded" 2>&1 | head -n 1
"$DPROBE" flamegraph /nonexistent.folded
echo "-> $?"
# trace's --flamegraph is the flamegraph format to one file
"$DPROBE" trace -e 'p:w work' --flamegraph "$IN/t.svg" --format json \
	-- "$EXAMPLE" 2>&1 | head -n 1
"$DPROBE" trace -e 'p:w work' --flamegraph "$IN/t.svg" -o "$IN/t2" \
	-- "$EXAMPLE" 2>&1 | head -n 1
echo "-> $(ls "$IN")"
rm -rf "$IN"
