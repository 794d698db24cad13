/*
 * feed.h - the decoding side of the rbtrace extension: a session over the
 * recording a database was made from, run on a thread of its own, whose
 * branches come out as rows in batches through a small bounded queue, so
 * that a virtual table's cursor pulls them one at a time (SQLite's xNext)
 * while the session pushes (its sink). Memory is the queue and the objects
 * the rows name, never the trace.
 *
 * A row names the session's objects (thread, comm, object, symbol) through
 * records the feed copies once per object (struct rb_feed_obj): the
 * session's own objects die with it, and the rows may outlive it in the
 * queue. The cursor turns records into the database's ids (rbtrace.c).
 *
 * Row ids follow the store's rule (store/sqlite/store.c): every sample and
 * every trace event the session delivers takes the next samples id, whether
 * or not the feed passes it on, so a branch has the id an export with
 * --itrace=b gave it. Calls come from the calls builder (decoder/calls) fed
 * as the store feeds it (branches with flags, sampled call chains, decoder
 * restarts), so that its call and call path ids are the export's; its keys
 * are the feed's object records (their index + 1).
 */
#ifndef RB_FEED_H
#define RB_FEED_H

#include <stdint.h>
#include "decoder/session/session.h"

enum rb_feed_obj_kind { RB_OBJ_THREAD = 1, RB_OBJ_COMM, RB_OBJ_DSO, RB_OBJ_SYM, RB_OBJ_EVSEL, RB_OBJ_GAP };

/* An object a row names, copied from the session; @id is the cursor's (0: not yet resolved). */
struct rb_feed_obj {
	int kind;
	int64_t pid, tid;          /* thread: its ids; comm: the process it was exported with; gap: cpu */
	uint64_t a, b;             /* thread: generation; comm: start, exec; symbol: start, end; gap: times */
	char *name;                /* comm, object's long name, symbol, event name, gap's reason */
	char *build_id;            /* object: hex, "" if unknown; gap: its detail */
	struct rb_feed_obj *dso;   /* symbol: its object */
	uint64_t key;              /* its index + 1: the calls builder's key for it */
	int64_t id;                /* the database's id, set by the cursor; -1: not there */
};

/* Which table a feed makes rows of. */
enum rb_feed_table { RB_FEED_BRANCHES, RB_FEED_CALLS };

/* The columns of a branch row: those of perf's samples table, then pid and tid. */
enum rb_feed_col {
	RBC_ID, RBC_EVSEL, RBC_MACHINE, RBC_THREAD, RBC_COMM, RBC_DSO, RBC_SYMBOL, RBC_SYM_OFFSET, RBC_IP,
	RBC_TIME, RBC_CPU, RBC_TO_DSO, RBC_TO_SYMBOL, RBC_TO_SYM_OFFSET, RBC_TO_IP, RBC_PERIOD, RBC_WEIGHT,
	RBC_TRANSACTION, RBC_DATA_SRC, RBC_BRANCH_TYPE, RBC_IN_TX, RBC_CALL_PATH, RBC_INSN_COUNT, RBC_CYC_COUNT,
	RBC_FLAGS, RBC_PID, RBC_TID, RBC_COUNT
};

/* The columns of a call row: those of perf's calls table, then pid and tid. */
enum rb_feed_call_col {
	RCC_ID, RCC_THREAD, RCC_COMM, RCC_CALL_PATH, RCC_CALL_TIME, RCC_RETURN_TIME, RCC_BRANCH_COUNT,
	RCC_CALL_ID, RCC_RETURN_ID, RCC_PARENT_CALL_PATH, RCC_FLAGS, RCC_PARENT_ID, RCC_INSN_COUNT,
	RCC_CYC_COUNT, RCC_PID, RCC_TID, RCC_COUNT
};

/*
 * A row as the session made it. Rows travel between threads in batches,
 * and a count reads millions of them, so their memory is what bounds a
 * whole-trace query: a branch's values are 64 bytes; the objects it names
 * are apart (struct rb_feed_names) and are not written at all when the
 * query reads none of them (the filter's lean).
 */
struct rb_feed_branch {
	int64_t id, ip, to_ip, time, insn_count, cyc_count;
	uint32_t flags;              /* perf's sample flags: branch_type and in_tx come from them */
	int32_t cpu, pid, tid;       /* pid, tid: -1 without a thread */
};

struct rb_feed_names {
	struct rb_feed_obj *evsel, *thread, *comm, *dso, *sym, *to_dso, *to_sym;
	int64_t sym_offset, to_sym_offset;
};

struct rb_feed_call {
	int64_t v[RCC_COUNT];        /* the thread and comm columns come from the objects below (the cursor's ids) */
	struct rb_feed_obj *thread, *comm;
};

/*
 * What rb_feed_next hands the cursor: a batch of @n rows of the feed's
 * table, row i a loss the decoding met when @gap[i] is set (not a row: the
 * cursor checks the database has it), else @b[i] and, unless lean,
 * @names[i] for branches, @c[i] for calls. The cursor walks a batch itself:
 * a count reads tens of millions of rows, and a call per row was a third
 * of its thread's work.
 */
struct rb_feed_rows {
	size_t n;
	struct rb_feed_obj *const *gap;
	const struct rb_feed_branch *b;
	const struct rb_feed_names *names;   /* NULL when lean */
	const struct rb_feed_call *c;
};

/*
 * Which rows: a time window [time_lo, time_hi] and CPU, pid, tid (-1: any).
 * Events come in the order the decoders' clocks give (a branch's time is
 * that of the packet proving it, which can be a little behind), so the
 * times of consecutive events of different queues may go back; within a
 * queue they do not. Decoding stops early once each of @queues (the trace
 * index's queues that start by time_hi) has passed time_hi; with none
 * given, it runs to the end.
 */
struct rb_feed_filter {
	enum rb_feed_table table;
	uint64_t time_lo, time_hi;
	int64_t cpu, pid, tid;
	const uint32_t *queues;
	size_t nqueues;
	/*
	 * Branches: the queues' seek points before time_lo (the export's
	 * trace_seek rows, one per queue at most) and the samples id that
	 * followed each. Decoding starts there and nothing it delivers counts
	 * until all were met; then ids go on from the last one's. Should the
	 * decoding not reproduce the export's (a seek point not met, or met
	 * late: an event already in the window), it starts again from the
	 * beginning, before any row was handed over.
	 */
	const struct rb_seek_ev *seek;
	const uint64_t *seek_seq;
	size_t nseek;
	uint64_t seek_lo;            /* where the seek points lead (0: time_lo): a branch there while waiting starts again */
	/*
	 * Branches: only the rows with ids in (id_lo, id_hi] (id_hi 0: no
	 * end), decoding stopping after id_hi: a part of a scan that two
	 * decodings share (rbtrace.c), the second starting at seek points.
	 */
	uint64_t id_lo, id_hi;
	/*
	 * Branches: the query reads none of the columns that name objects
	 * (event, thread, comm, dso, symbol and their offsets): the rows leave
	 * them out and no object is looked up (a count, a time histogram).
	 */
	int lean;
};

struct rb_feed;

/*
 * Start decoding the recording @so names (its path, machine options,
 * --itrace choices as the export had them) on a new thread. With @with (a
 * feed started before, not one started @with another), the two are read
 * as one: rb_feed_next(@with) hands over both's batches, whichever has one
 * (each's in order), and rb_feed_stop(@with) stops both; @with's filter
 * and this one's should share no row (id_lo, id_hi). 0, or -1 with @msg
 * (memory, thread).
 */
int rb_feed_start(struct rb_feed **out, const struct rb_session_opts *so, const struct rb_feed_filter *f,
		  struct rb_feed *with, char *msg, size_t msglen);
/*
 * The next batch of rows, NULL at the end. It stays valid until the next
 * call; its objects until rb_feed_stop. At the end, *@status is 0, or why
 * a session stopped early (then @msg says it: a damaged recording, memory).
 */
const struct rb_feed_rows *rb_feed_next(struct rb_feed *f, int *status, char *msg, size_t msglen);
/* Stop the sessions (if they still run), wait for their threads and free everything. Accepts NULL. */
void rb_feed_stop(struct rb_feed *f);

#endif
