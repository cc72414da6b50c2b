# shellcheck shell=sh disable=SC2015,SC2016,SC2034  # A && B || C: C when either fails; defs hold literal $vars; the runner reads the settings
desc='libdprobe.so in a set-user-ID program: DPROBE_AGENT_SOCK from an unprivileged user is ignored'
# setuid.c, linked with libdprobe.so, installed set-user-ID root in a
# scratch directory and run by nobody (setpriv) under sockwatch.c, which
# sets DPROBE_AGENT_SOCK=N and listens on every form of N the agent has
# ever read: an inherited descriptor N (a socket pair whose other end
# sockwatch holds) and the abstract address "@N".  The program runs
# with AT_SECURE: its environment is nobody's, so the agent must not
# connect or say anything; the program prints euid 0 (the bit took) and
# exits 0.  The agent used to connect to "@N" from its constructor.
prog=setuid
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines='auto agent'
needs='root setpriv'
# setuid.c links with libdprobe.so: built here, in the scratch directory
build_prog() {
	echo "$E2E/progs/setuid.c"
}
case_run() {
	D=$(mktemp -d /tmp/dpsuid.XXXXXX) && chmod 755 "$D" || return
	if findmnt -n -o OPTIONS -T "$D" | grep -qw nosuid; then
		rm -rf "$D"
		echo "$D is on a nosuid file system" >"$T/skip"
		exit 2
	fi
	mkdir "$D/lib" && cp "$(dirname "$DPROBE")/libdprobe.so" "$D/lib/" &&
		gcc -O2 -o "$D/setuid" "$P" -L"$D/lib" -Wl,--no-as-needed -ldprobe \
			-Wl,-rpath,"$D/lib" &&
		gcc -O2 -o "$T/sockwatch" "$E2E/progs/sockwatch.c" &&
		chown root:root "$D/setuid" && chmod 4755 "$D/setuid" ||
		{ echo "# cannot build" >"$T/result"; rm -rf "$D"; return; }
	timeout -k 5 30 "$T/sockwatch" setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$D/setuid" >"$T/result" 2>&1
	# no euid line and nothing said to sockwatch: the bit did not take
	if ! grep -q -e 'setuid: euid=0' -e '^sockwatch: a ' "$T/result"; then
		rm -rf "$D"
		echo "the set-user-ID bit did not take: $(head -n 1 "$T/result")" >"$T/skip"
		exit 2
	fi
	rm -rf "$D"
}
case_result() {
	cat "$T/result"
}
expected() {
	cat <<'EOF2'
setuid: euid=0
sockwatch: no connection
sockwatch: exit=0
EOF2
}
