// SPDX-License-Identifier: GPL-2.0
/*
 * A real program for bench/fgraph.sh: SQLite (linked from Debian's
 * libsqlite3.a, so that every one of its ~2,600 functions, static ones
 * included, has a symbol) building a table of N rows in memory and
 * running an aggregate query over it.  Prints the query's result.
 *
 *   fgraph_sqlite [N]
 */
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

static int row(void *u, int n, char **v, char **c)
{
	(void)u;
	(void)c;
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", v[i] ? v[i] : "NULL");
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	char sql[1024], *err = NULL;
	sqlite3 *db;

	if (sqlite3_open(":memory:", &db))
		return 1;
	snprintf(sql, sizeof(sql),
		 "create table t(a integer, b text);"
		 "with recursive c(x) as (select 1 union all select x + 1 "
		 "from c where x < %d) insert into t select x, 'r' || x "
		 "from c;"
		 "create index ti on t(b);"
		 "select count(*), sum(a), max(b) from t where a %% 3 = 0;", n);
	if (sqlite3_exec(db, sql, row, NULL, &err)) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	sqlite3_close(db);
	return 0;
}
