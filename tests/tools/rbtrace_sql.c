/*
 * rbtrace_sql.c - a minimal sqlite3 shell with the rbtrace extension linked
 * in (registered as an auto extension, the way .load would call it): for
 * the tests of a sanitized build, whose extension a plain sqlite3 or Python
 * cannot load. Usage: rbtrace_sql DB SQL; rows go to stdout, columns
 * separated by '|' as sqlite3 prints them; an error goes to stderr, exit 1.
 */
#include <stdio.h>
#include <sqlite3.h>

int sqlite3_rbtrace_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

static int print_row(void *ctx, int n, char **v, char **names)
{
	(void)ctx, (void)names;
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? "|" : "", v[i] ? v[i] : "");
	putchar('\n');
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rbtrace_sql DB SQL\n");
		return 2;
	}
	sqlite3_auto_extension((void (*)(void))sqlite3_rbtrace_init);
	sqlite3 *db;
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "rbtrace_sql: %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 1;
	}
	char *err = NULL;
	int rc = sqlite3_exec(db, argv[2], print_row, NULL, &err);
	if (rc != SQLITE_OK)
		fprintf(stderr, "Error: %s\n", err ? err : sqlite3_errmsg(db));
	sqlite3_free(err);
	sqlite3_close(db);
	sqlite3_reset_auto_extension();
	return rc == SQLITE_OK ? 0 : 1;
}
