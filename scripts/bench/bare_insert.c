/*
 * bare_insert.c - the limit for the SQLite benchmark: read every row of the
 * samples table of a database into memory, then insert them into a fresh
 * database through one prepared statement in one transaction (journal and
 * sync off, as rbdecode does), and print rows per second of that loop alone.
 *
 *   bare_insert SOURCE.db
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NCOL 25

int main(int argc, char **argv)
{
	sqlite3 *src, *dst;
	sqlite3_stmt *q;
	if (argc != 2 || sqlite3_open_v2(argv[1], &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "usage: bare_insert SOURCE.db\n");
		return 1;
	}
	size_t n = 0, cap = 1 << 16;
	int64_t *rows = malloc(cap * NCOL * sizeof(int64_t));
	sqlite3_prepare_v2(src, "SELECT * FROM samples", -1, &q, NULL);
	while (rows && sqlite3_step(q) == SQLITE_ROW) {
		if (n == cap) {
			cap *= 2;
			rows = realloc(rows, cap * NCOL * sizeof(int64_t));
			if (!rows)
				break;
		}
		for (int c = 0; c < NCOL; c++)
			rows[n * NCOL + c] = sqlite3_column_int64(q, c);
		n++;
	}
	sqlite3_finalize(q);
	sqlite3_close(src);
	if (!rows)
		return 1;
	char path[] = "/tmp/bare_insertXXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	sqlite3_open(path, &dst);
	sqlite3_exec(dst, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
		     "CREATE TABLE samples (id integer NOT NULL PRIMARY KEY, evsel_id bigint, machine_id bigint,"
		     " thread_id bigint, comm_id bigint, dso_id bigint, symbol_id bigint, sym_offset bigint, ip bigint,"
		     " time bigint, cpu integer, to_dso_id bigint, to_symbol_id bigint, to_sym_offset bigint,"
		     " to_ip bigint, period bigint, weight bigint, transaction_ bigint, data_src bigint,"
		     " branch_type integer, in_tx boolean, call_path_id bigint, insn_count bigint, cyc_count bigint,"
		     " flags integer); BEGIN", NULL, NULL, NULL);
	sqlite3_prepare_v2(dst, "INSERT INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &q, NULL);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < NCOL; c++)
			sqlite3_bind_int64(q, c + 1, rows[i * NCOL + c]);
		sqlite3_step(q);
		sqlite3_reset(q);
	}
	sqlite3_exec(dst, "COMMIT", NULL, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sqlite3_finalize(q);
	sqlite3_close(dst);
	unlink(path);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%zu %.6f\n", n, s);
	free(rows);
	return 0;
}
