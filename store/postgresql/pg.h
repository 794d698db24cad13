/*
 * pg.h - the PostgreSQL output: a table writer (store/table_writer.h) that
 * loads the rows the SQLite store's producer decides into a server database,
 * in the schema of perf's export-to-postgresql.py plus our tables, every
 * table keyed by recording so that many recordings share one database.
 * One transaction per recording: what a failed or killed load sent is
 * rolled back by the server.
 */
#ifndef RB_PG_H
#define RB_PG_H

#include <stdint.h>
#include "store/table_writer.h"

/* What the recordings table says of a recording. Strings may be NULL (unknown). */
struct rb_pg_recording {
	const char *host, *path, *perf_version, *arch;   /* perf.data header features; its path */
	const char *hash;             /* rb_fingerprint's: with @size, what tells recordings apart */
	uint64_t size;
	int64_t recorded;             /* when it was recorded (the file's mtime, as perf report's "captured on"), unix s; 0 unknown */
};

/* 1 if an -o value names a PostgreSQL database (postgresql:// or postgres:// URI). */
int rb_pg_is_target(const char *s);

/*
 * Connect with @conninfo (a URI or key=value string; PG* variables apply;
 * connect_timeout 10 s unless given), create the tables that are missing,
 * and open the load's transaction with the recording's row. A recording
 * loaded before (same hash and size) is refused unless @force; then its
 * rows are deleted in the same transaction. The tables that grow with the
 * recording (samples, calls...) go over @streams connections at once (at
 * least 1), into tables of the load's own that its transaction attaches as
 * the recording's partitions at the end. Returns 0 with *@out (owned by
 * whoever gets it: rb_store_opts.writer), -1 (no connection, the server
 * refused) or -2 (already loaded) with a one-line @msg.
 */
int rb_pg_open(const struct rb_table_writer **out, const char *conninfo, const struct rb_pg_recording *rec,
	       int force, int streams, int64_t *recording_id, char *msg, size_t msglen);

#endif
