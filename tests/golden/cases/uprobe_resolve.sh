off=$(( 0x$(nm "$EXAMPLE" | awk '$3 == "work" { print $1 }') - 0x400000 ))
hex=$(printf '%016x' $off)
"$DPROBE" check "p:u/ok $EXAMPLE:$off a=%di:s32" "p:u/mid $EXAMPLE:$((off + 2))" "p:u/out $EXAMPLE:0x99999" |
	sed "s#$hex#OFF#g; s#:$((off + 2))#:OFF+2#g; s#$EXAMPLE#EXAMPLE#g; s#size 0x[0-9a-f]*#size N#"
