/*
 * table_writer.h - where the store's rows go. store/sqlite/store.c decides
 * every row of an export (ids, values, which table; perf's db-export rules)
 * and hands each one to a table writer: its own SQLite statements, or another
 * database behind this interface (store/postgresql/). A writer only stores
 * what it is given, in the order given; it decides no id and no value.
 */
#ifndef RB_TABLE_WRITER_H
#define RB_TABLE_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* The tables, each row's values in the SQLite schema's column order (schema.sql.h). */
enum rb_table {
	RB_T_EVSEL, RB_T_MACHINE, RB_T_THREAD, RB_T_COMM, RB_T_COMM_THREAD, RB_T_DSO, RB_T_SYMBOL,
	RB_T_BRANCH_TYPE, RB_T_SAMPLE, RB_T_CALL_PATH, RB_T_SWITCH, RB_T_GAP, RB_T_AUX, RB_T_IMC,
	RB_T_IMC_COUNTER, RB_T_STAT, RB_T_CALL, RB_T_FTRACE, RB_T_PTWRITE, RB_T_CBR, RB_T_MWAIT, RB_T_PWRE,
	RB_T_EXSTOP, RB_T_PWRX, RB_T_PATH_STAT, RB_T_EDGE, RB_T_SYNC, RB_T_SEEK, RB_T_COUNT
};

/* One value: an integer, or (text 1) a string valid only during the call. */
struct rb_tval { int text; int64_t i; const char *s; };

/*
 * An external writer (rb_store_opts.writer). Called from the thread that
 * runs the session, one call at a time. decode_stats (RB_T_STAT) rows are
 * (name, value) and a later row of the same name replaces the earlier one.
 */
struct rb_table_writer {
	void *ctx;
	/* One row of @t: 0, or -1 (the writer is dead; error() says why). */
	int (*row)(void *ctx, enum rb_table t, const struct rb_tval *v, int n);
	/*
	 * Every row was given: make the load durable. @rows counts the rows per
	 * table (the "unknown" rows 0 not counted); @calls_dropped: the calls
	 * table holds only its row 0 and the SQLite store drops it.
	 * @call_comms[id] is 1 for each comm id below @nr_call_comms that has
	 * calls (comms.has_calls, as perf's export sets it: the "unknown" comm
	 * of calls row 0 among them once any call is written); NULL: not known
	 * (memory ran out), take them from the calls table. 0 or -1.
	 */
	int (*finish)(void *ctx, const uint64_t *rows, int calls_dropped, const uint8_t *call_comms,
		      size_t nr_call_comms);
	/* Give up: nothing of this load remains. Frees the writer. */
	void (*abort)(void *ctx);
	/* Why the writer failed, as a sentence; NULL if it did not. */
	const char *(*error)(void *ctx);
};

#endif
