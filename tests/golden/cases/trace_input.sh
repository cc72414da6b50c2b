# -e with newlines: one definition per line, as kprobe_events takes a
# write; a bad line gets the kernel's error for that line alone
"$DPROBE" trace -e "$(printf 'p:a work\np:b work %%foo')" -- "$EXAMPLE"; echo "-> $?"
"$DPROBE" check -x "$EXAMPLE" "$(printf 'p:a work\n\np:b work %%foo\nr:c work')"; echo "-> $?"
# more -e than dprobe holds: said so, not the bare usage
set --
i=0
while [ $i -le 1024 ]; do
	set -- "$@" -e "p:e$i work"
	i=$((i + 1))
done
"$DPROBE" trace "$@" -- "$EXAMPLE"; echo "-> $?"
set --
i=0
while [ $i -le 64 ]; do
	set -- "$@" --filter "a=common_pid == $i"
	i=$((i + 1))
done
"$DPROBE" trace -e 'p:a work' "$@" -- "$EXAMPLE"
