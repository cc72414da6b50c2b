# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a Debian program: sqlite3 through libsqlite3.so.0, the SQL text of each statement prepared'
# The sqlite3 shell runs the SQL given on its command line one statement
# at a time: sqlite3_prepare_v2(db, zSql, -1, &stmt, &tail) with zSql the
# rest of the text, so the statements show up as the whole text, then
# from " insert" on (the shell skips the blank), then from "select" on.
# The shell also prepares its own queries (reading the schema); those
# are not checked.  The probe names the library by its soname and reads
# the second argument (%si) as a string.  The result is 42 * 2.
levels=O2
needs=root
case_run() {
	if ! command -v sqlite3 >/dev/null 2>&1; then
		apt-get install -y sqlite3 >"$T/apt.log" 2>&1 ||
			{ echo "sqlite3 is not installed and apt-get failed" >"$T/skip"; exit 2; }
	fi
	dp_trace -e 'p:prep libsqlite3.so.0:sqlite3_prepare_v2 sql=+0(%si):string' \
		-- sqlite3 :memory: \
		'create table t(a); insert into t values(42); select a * 2 from t;'
}
case_result() {
	for s in 'create table t(a); insert into t values(42); select a * 2 from t;' \
		'insert into t values(42); select a * 2 from t;' \
		'select a * 2 from t;'; do
		n=$(norm_trace <"$T/events" | grep -c -F "prep: (sqlite3_prepare_v2+0x0/0x" |
			tr -d ' ')
		[ "$n" -ge 3 ] || echo "# only $n prepare events"
		if norm_trace <"$T/events" | grep -q -F " sql=\"$s\""; then
			echo "# prepared: $s"
		else
			echo "# NOT prepared: $s"
		fi
	done
	norm_trace <"$T/events" | grep -v '^sqlite3 prep: (sqlite3_prepare_v2+0x0/0x[0-9a-f]*) sql="' |
		sed 's/^/# unexpected: /'
	sed 's/^/> /' "$T/stdout"
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
# prepared: create table t(a); insert into t values(42); select a * 2 from t;
# prepared: insert into t values(42); select a * 2 from t;
# prepared: select a * 2 from t;
> 84
# exit=0
EOF2
}
