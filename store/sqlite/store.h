/*
 * store.h - the SQLite store: perf's export-to-sqlite.py schema (same tables,
 * columns, views and id conventions: id 0 is "unknown" in every table), plus
 * the tables perf lacks (gaps, aux_buffers, imc_records, imc_counters, decode_stats).
 * It is a session sink: it knows threads, comms, objects and symbols, never
 * trace formats. The database is built under a temporary name beside the
 * target and renamed into place only when complete, so an interrupted run
 * never leaves a half-built file under the name asked for.
 */
#ifndef RB_STORE_H
#define RB_STORE_H

#include "decoder/session/session.h"
#include "decoder/ftrace/tracedat.h"
#include "store/table_writer.h"

#define RB_STORE_SCHEMA_VERSION 5   /* 2: imc_counters; imc_records.flush_time, evsel_id; 3: ftrace_events;
					4: rows in ptwrite, cbr, mwait, pwre, exstop, pwrx (--itrace=pw);
					5: trace_seek */

struct rb_store;

struct rb_store_opts {
	const char *path;        /* final database path */
	int force;               /* replace an existing file */
	const char *source;      /* input name, for decode_stats */
	/*
	 * What hardware-trace branches leave beside the aggregates (call_paths,
	 * call_path_stats, branch_edges), which are always written: a samples
	 * row each (--itrace=b) and the calls rows they make (--calls). Both 0
	 * (the default) keep the database growing with the program, not the
	 * trace; sample ids are the same either way.
	 */
	int branch_rows;
	int call_rows;
	int quick;                    /* the quick pass (--quick): the trace's code was not walked, so its
					 calls are not known (no calls table, as when they are not stored) */
	/*
	 * Not NULL: the rows go to this writer (another database) instead of
	 * a SQLite file at @path, which is then only the name in messages. The
	 * store owns it from rb_store_open on: finish or abort ends it.
	 */
	const struct rb_table_writer *writer;
};

/* Create the temporary database with the schema. Returns 0, PD_ERR_NOMEM when memory ran out, or -1
 * (the file exists, cannot be created) with @msg. */
int rb_store_open(struct rb_store **out, const struct rb_store_opts *o, char *msg, size_t msglen);
/* The sink to run a session into. */
const struct rb_sink *rb_store_sink(struct rb_store *st);
/* The sink for a trace.dat's events (ftrace_events) and gaps; used after the session, or alone. */
const struct rb_ftrace_sink *rb_store_ftrace_sink(struct rb_store *st);
/*
 * Record how the run went (in decode_stats; partial runs are marked), add
 * indexes, commit, and rename into place. Returns 0 or -1 with @msg; the
 * temporary file is removed on failure. Frees @st.
 */
int rb_store_finish(struct rb_store *st, const struct rb_session_stats *stats, char *msg, size_t msglen);
/* Give up: remove the temporary file. Frees @st. Accepts NULL. */
void rb_store_abort(struct rb_store *st);
/* A decode_stats row (name, value); "partial" with a non-zero value marks the run partial. */
void rb_store_note(struct rb_store *st, const char *name, uint64_t value);
/* The same with a text value (call between the session's end and rb_store_finish). */
void rb_store_note_text(struct rb_store *st, const char *name, const char *value);
/*
 * Why the store failed (a sink callback returned non-zero), as a sentence
 * naming the file and SQLite's and the system's reason; NULL if it did not.
 * Stops the writer thread first; call only once the session is over.
 */
const char *rb_store_error(struct rb_store *st);
/* Rows written per table, for the summary line. */
uint64_t rb_store_rows(const struct rb_store *st, const char *table);

#endif
