# --format ctf writes a directory: without -o it is refused (exit 2, the
# usage after the reason); a directory with a file in it is refused
# (exit 1) and left as it was; a file is no directory
d=$(mktemp -d) || exit 2
"$DPROBE" trace --format ctf -e 'p:a work' -- "$EXAMPLE" 2>"$d/err"; echo "-> $?"
head -n 2 "$d/err"
mkdir "$d/full" && : >"$d/full/keep"
"$DPROBE" trace --format ctf -o "$d/full" -e 'p:a work' -- "$EXAMPLE" \
	>"$d/out" 2>&1; echo "-> $?"
sed "s#$d/#TMP/#" "$d/out"
ls "$d/full"
"$DPROBE" trace --format ctf -o "$d/full/keep" -e 'p:a work' -- "$EXAMPLE" \
	>"$d/out" 2>&1; echo "-> $?"
sed "s#$d/#TMP/#" "$d/out"
rm -rf "$d"
