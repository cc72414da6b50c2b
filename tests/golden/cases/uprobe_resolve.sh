# A copy at a path of fixed length, so carets do not move with the build dir.
dir=$(mktemp -d /tmp/dprobe-golden.XXXXXX)
ex=$dir/work
cp "$EXAMPLE" "$ex"
off=$(( 0x$(nm "$ex" | awk '$3 == "work" { print $1 }') - 0x400000 ))
hex=$(printf '%016x' $off)
"$DPROBE" check "p:u/ok $ex:$off a=%di:s32" "p:u/mid $ex:$((off + 2))" "p:u/out $ex:0x99999" |
	sed "s#$hex#OFF#g; s#:$((off + 2))#:OFF+2#g; s#$dir#DIR#g; s#size 0x[0-9a-f]*#size N#"
rm -rf "$dir"
