"$DPROBE" check -f /nonexistent/probes; echo "-> $?"
"$DPROBE" check -f /tmp; echo "-> $?"
printf "p:g/e /bin/sh:0x10\000garbage\n" > /tmp/dprobe-golden-nul
"$DPROBE" check -f /tmp/dprobe-golden-nul; echo "-> $?"
rm -f /tmp/dprobe-golden-nul
"$DPROBE" check -x /etc/passwd 'p work'; echo "-> $?"
"$DPROBE" check 'p:g/e /etc/passwd:0x10'; echo "-> $?"
"$DPROBE" check; echo "-> $?"
"$DPROBE" nosuchcommand; echo "-> $?"
printf 'p:g/e \377\376 %%di\n' | "$DPROBE" check -f -; echo "-> $?"
{ "$DPROBE" mount /tmp --syscalls sometimes -- true 2>&1; echo "-> $?"; } | sed -n '1p;$p'
