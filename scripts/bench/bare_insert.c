/*
 * bare_insert.c - the limit for the SQLite benchmark: read every row of
 * every table of a database rbdecode made into memory, then build the same
 * database again with nothing but SQLite: the same tables, prepared
 * statements per table reused for all its rows (32 rows per statement, and
 * the rest one by one, as rbdecode's writer does; a rowid one above the
 * table's largest bound as NULL, as rbdecode binds it), one transaction, then
 * the same indexes; and SQLite set up as rbdecode sets it up (journaling and
 * syncing off, 64 KiB pages, 4 MiB of cache, no memory statistics, no
 * per-connection mutex), so that the limit is not slower for settings.
 * Prints the rows written, the sample rows among them and the seconds of
 * that build alone (reading the source is not timed); with --samples, only
 * the samples table (the loop the benchmark used before).
 *
 *   bare_insert [--samples] SOURCE.db
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct cell { int64_t v; int type; };     /* SQLITE_INTEGER, SQLITE_TEXT (v: arena offset), SQLITE_NULL */
struct table { char *name, *sql; int ncol; size_t nrows; struct cell *cells; int rowid_first; int64_t max_rowid; };

static char *arena;
static size_t arena_len, arena_cap;

static int64_t keep_text(const unsigned char *s, int n)
{
	if (arena_len + (size_t)n + 1 > arena_cap) {
		arena_cap = (arena_cap + (size_t)n + 1) * 2;
		if (!(arena = realloc(arena, arena_cap)))
			exit(1);
	}
	memcpy(arena + arena_len, s, (size_t)n);
	arena[arena_len + (size_t)n] = 0;
	arena_len += (size_t)n + 1;
	return (int64_t)(arena_len - (size_t)n - 1);
}

static int load(sqlite3 *src, struct table *t)
{
	char q[256];
	sqlite3_stmt *st;
	snprintf(q, sizeof(q), "SELECT * FROM \"%s\"", t->name);
	if (sqlite3_prepare_v2(src, q, -1, &st, NULL) != SQLITE_OK)
		return -1;
	t->ncol = sqlite3_column_count(st);
	size_t cap = 1024;
	t->cells = malloc(cap * (size_t)t->ncol * sizeof(*t->cells));
	while (t->cells && sqlite3_step(st) == SQLITE_ROW) {
		if (t->nrows == cap) {
			cap *= 2;
			if (!(t->cells = realloc(t->cells, cap * (size_t)t->ncol * sizeof(*t->cells))))
				break;
		}
		struct cell *c = &t->cells[t->nrows * (size_t)t->ncol];
		for (int i = 0; i < t->ncol; i++) {
			c[i].type = sqlite3_column_type(st, i);
			if (c[i].type == SQLITE_TEXT)
				c[i].v = keep_text(sqlite3_column_text(st, i), sqlite3_column_bytes(st, i));
			else if (c[i].type == SQLITE_INTEGER)
				c[i].v = sqlite3_column_int64(st, i);
			else
				c[i].type = SQLITE_NULL;
		}
		t->nrows++;
	}
	sqlite3_finalize(st);
	return t->cells ? 0 : -1;
}

#define MULTI 32

/* INSERT of @rows rows of table @t at once. */
static sqlite3_stmt *prepare(sqlite3 *db, const struct table *t, int rows)
{
	static char q[65536];
	sqlite3_stmt *st;
	int n = snprintf(q, sizeof(q), "INSERT INTO \"%s\" VALUES ", t->name);
	for (int k = 0; k < rows && n < (int)sizeof(q) - 8; k++)
		for (int c = 0; c < t->ncol && n < (int)sizeof(q) - 8; c++)
			n += snprintf(q + n, sizeof(q) - (size_t)n, "%s%s%s", c ? "" : k ? ", (" : "(", c ? ",?" : "?",
				      c == t->ncol - 1 ? ")" : "");
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "bare_insert: %.200s: %s\n", q, sqlite3_errmsg(db));
		return NULL;
	}
	return st;
}

/* Row @r of @t into parameters @first + 1 ... of @st. */
static void bind_row(sqlite3_stmt *st, int first, struct table *t, size_t r)
{
	const struct cell *cl = &t->cells[r * (size_t)t->ncol];
	for (int c = 0; c < t->ncol; c++) {
		if (c == 0 && t->rowid_first && cl[c].type == SQLITE_INTEGER && cl[c].v == t->max_rowid + 1)
			sqlite3_bind_null(st, first + c + 1);   /* SQLite makes the same rowid at the b-tree's right edge */
		else if (cl[c].type == SQLITE_INTEGER)
			sqlite3_bind_int64(st, first + c + 1, cl[c].v);
		else if (cl[c].type == SQLITE_TEXT)
			sqlite3_bind_text(st, first + c + 1, arena + cl[c].v, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, first + c + 1);
		if (c == 0 && t->rowid_first && cl[c].type == SQLITE_INTEGER && cl[c].v > t->max_rowid)
			t->max_rowid = cl[c].v;
	}
}

int main(int argc, char **argv)
{
	int samples_only = argc == 3 && !strcmp(argv[1], "--samples");
	const char *path = argv[argc - 1];
	sqlite3 *src, *dst;
	sqlite3_stmt *st;
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);   /* before SQLite's first use, as rbdecode */
	if (argc != 2 + samples_only || sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "usage: bare_insert [--samples] SOURCE.db\n");
		return 1;
	}
	struct table tabs[64];
	char *indexes[64];
	int nt = 0, ni = 0;
	sqlite3_prepare_v2(src, "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND"
			   " name NOT LIKE 'sqlite_%' AND type IN ('table', 'index') ORDER BY rowid", -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
		const char *sql = (const char *)sqlite3_column_text(st, 2);
		if (samples_only && strcmp(name, "samples"))
			continue;
		if (!strcmp(type, "table") && nt < 64)
			tabs[nt++] = (struct table){ strdup(name), strdup(sql), 0, 0, NULL };
		else if (!strcmp(type, "index") && ni < 64 && !samples_only)
			indexes[ni++] = strdup(sql);
	}
	sqlite3_finalize(st);
	size_t rows = 0, samples = 0;
	for (int i = 0; i < nt; i++) {
		char q[256];
		snprintf(q, sizeof(q), "SELECT (SELECT upper(type) = 'INTEGER' AND pk = 1 FROM pragma_table_info('%s') WHERE cid = 0)"
			 " AND (SELECT count(*) FROM pragma_table_info('%s') WHERE pk > 0) = 1", tabs[i].name, tabs[i].name);
		if (sqlite3_prepare_v2(src, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			tabs[i].rowid_first = sqlite3_column_int(st, 0) == 1;
		sqlite3_finalize(st);
		if (load(src, &tabs[i])) {
			fprintf(stderr, "bare_insert: cannot read table %s\n", tabs[i].name);
			return 1;
		}
		rows += tabs[i].nrows;
		if (!strcmp(tabs[i].name, "samples"))
			samples = tabs[i].nrows;
	}
	sqlite3_close(src);

	char tmp[] = "/tmp/bare_insertXXXXXX";
	int fd = mkstemp(tmp);
	close(fd);
	unlink(tmp);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	sqlite3_exec(dst, "PRAGMA page_size = 65536; PRAGMA cache_size = -4096; "
		     "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;",
		     NULL, NULL, NULL);
	for (int i = 0; i < nt; i++)
		sqlite3_exec(dst, tabs[i].sql, NULL, NULL, NULL);
	sqlite3_exec(dst, "BEGIN", NULL, NULL, NULL);
	for (int i = 0; i < nt; i++) {
		struct table *t = &tabs[i];
		sqlite3_stmt *one = prepare(dst, t, 1), *many = prepare(dst, t, MULTI);
		if (!one || !many)
			return 1;
		size_t r = 0;
		for (; r + MULTI <= t->nrows; r += MULTI) {   /* MULTI rows per statement, as rbdecode's writer */
			for (int k = 0; k < MULTI; k++)
				bind_row(many, k * t->ncol, t, r + (size_t)k);
			if (sqlite3_step(many) != SQLITE_DONE)
				return fprintf(stderr, "bare_insert: %s: %s\n", t->name, sqlite3_errmsg(dst)), 1;
			sqlite3_reset(many);
		}
		for (; r < t->nrows; r++) {
			bind_row(one, 0, t, r);
			if (sqlite3_step(one) != SQLITE_DONE)
				return fprintf(stderr, "bare_insert: %s: %s\n", t->name, sqlite3_errmsg(dst)), 1;
			sqlite3_reset(one);
		}
		sqlite3_finalize(one);
		sqlite3_finalize(many);
	}
	sqlite3_exec(dst, "COMMIT", NULL, NULL, NULL);
	for (int i = 0; i < ni; i++)
		sqlite3_exec(dst, indexes[i], NULL, NULL, NULL);
	sqlite3_close(dst);
	clock_gettime(CLOCK_MONOTONIC, &b);
	unlink(tmp);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%zu %zu %.6f\n", rows, samples, s);
	return 0;
}
