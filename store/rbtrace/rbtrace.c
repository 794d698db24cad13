/*
 * rbtrace.c - the rbtrace SQLite extension (entry point sqlite3_rbtrace_init):
 * lazy tables over the recording a database was made from. In a database
 * rbdecode wrote, `SELECT ... FROM branches WHERE ...` decodes the trace on
 * demand (feed.c runs the session on a thread of its own) instead of
 * reading rows an export stored, so the database stays small and every
 * branch is still reachable by SQL.
 *
 * branches: the columns of perf's samples table as an export with
 * --itrace=b stores a branch, row for row the same (ids included), and two
 * hidden columns, pid and tid. Constraints on time (=, <, <=, >, >=), cpu,
 * pid and tid are pushed down (xBestIndex): rows outside them are never
 * made, and decoding stops once every queue has passed the window's end
 * (feed.h). Rows come in the export's order (ids ascending), but for a
 * whole-trace scan that reads no object and asks no order, which two
 * sessions decode at once (start_split): two runs of ascending ids.
 *
 * calls: perf's calls table, from the calls builder fed as the export
 * feeds it, with pid and tid hidden; constraints on call_time, pid and tid
 * are pushed down. A call is known when it returns, so every query
 * decodes the trace to its end, and rows come in the order calls end. A
 * database that stored its calls (--calls) has a real table of that name,
 * which SQLite uses instead: the lazy one serves where it is missing, as
 * do the views over it (calls_view, call_paths_view).
 *
 * Where the database's ids come from: the session's objects (threads,
 * comms, objects, symbols) are looked up by what identifies them in the
 * database (pid/tid, name and time, path and build-id, start/end/name),
 * from maps loaded once per connection. An object the database lacks is an
 * SQL error naming it: the database was made from another recording, or
 * under other options. So is a recording that moved or changed (its path,
 * size and a hash of its first bytes are in decode_stats), and so is a
 * loss the decoding meets that the export did not (a binary missing now):
 * a short answer is never silent.
 */
#include "config.h"
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/rbtrace/feed.h"
#include "store/rbtrace/recording.h"
#include "decoder/calls/idmap.h"
#include "decoder/session/unpack.h"

/* ------------------------------------------------------------ ids */

/*
 * The database's ids of the session's objects, by kind (IDS_DSO ... IDS_EVSEL),
 * each map read from its table when a row first names an object of its kind:
 * a query that reads no such column (a count, a histogram of times) reads none,
 * and a recording that starts a thread per task has as many threads and comms
 * as it has tasks.
 */
enum { IDS_DSO, IDS_SYM, IDS_THREAD, IDS_COMM, IDS_EVSEL, IDS_KINDS };
struct ids {
	struct rb_idmap m[IDS_KINDS];
	unsigned loaded;           /* bit k: m[k] is read */
	sqlite3 *db;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

#define THREAD_COUNT UINT64_MAX      /* the key under which a (pid, tid)'s number of rows is kept */

/* Put (a,b,c) -> id unless the key has one already (the first row wins). 0, or -1 out of memory. */
static int put(struct rb_idmap *m, uint64_t a, uint64_t b, uint64_t c, uint64_t id)
{
	struct rb_idkey *k = rb_idmap_get(m, a, b, c);
	if (!k)
		return -1;
	if (!k->id)
		k->id = id;
	return 0;
}

static const char *text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? (const char *)t : "";
}

/* Read map @q from its table unless it is read. SQLITE_OK, or an error with *@err set. */
static int ids_load(struct ids *ids, size_t q, char **err)
{
	static const char *const sql[IDS_KINDS] = {
		"SELECT id, long_name, build_id, 0, 0 FROM dsos WHERE id > 0 ORDER BY id",
		"SELECT id, dso_id, sym_start, sym_end, name FROM symbols WHERE id > 0 ORDER BY id",
		"SELECT id, pid, tid, 0, 0 FROM threads WHERE id > 0 ORDER BY id",
		"SELECT c.id, c.comm, c.c_time, c.exec_flag, t.pid FROM comms c LEFT JOIN threads t"
		" ON t.id = c.c_thread_id WHERE c.id > 0 ORDER BY c.id",
		"SELECT id, name, 0, 0, 0 FROM selected_events WHERE id > 0 ORDER BY id",
	};
	if (ids->loaded & (1u << q))
		return SQLITE_OK;
	sqlite3 *db = ids->db;
	struct rb_idmap *m = &ids->m[q];
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql[q], -1, &s, NULL);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("rbtrace: this is not a database rbdecode made (%s)", sqlite3_errmsg(db));
		return rc;
	}
	int bad = 0;
	while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t id = (uint64_t)sqlite3_column_int64(s, 0);
		uint64_t i2 = (uint64_t)sqlite3_column_int64(s, 2), i3 = (uint64_t)sqlite3_column_int64(s, 3);
		switch (q) {
		case IDS_DSO:
			bad = put(m, fnv(text(s, 1)), fnv(text(s, 2)), 0, id);
			break;
		case IDS_SYM:
			bad = put(m, (uint64_t)sqlite3_column_int64(s, 1), i2,
				  fnv(text(s, 4)) ^ (i3 * 0x9e3779b97f4a7c15ULL), id);
			break;
		case IDS_THREAD: {
			uint64_t pid = (uint64_t)sqlite3_column_int64(s, 1);
			struct rb_idkey *n = rb_idmap_get(m, pid, i2, THREAD_COUNT);
			if (!n) {
				bad = 1;
				break;
			}
			bad = put(m, pid, i2, n->id++, id);   /* the n-th row of (pid, tid) */
			break;
		}
		case IDS_COMM: {
			uint64_t pid = sqlite3_column_type(s, 4) == SQLITE_NULL ? 0
				     : (uint64_t)sqlite3_column_int64(s, 4) + 1;
			bad = put(m, fnv(text(s, 1)), i2, (i3 & 1) | (pid << 1), id) ||
			      put(m, fnv(text(s, 1)), i2, (i3 & 1), id);
			break;
		}
		default:
			bad = put(m, fnv(text(s, 1)), 0, 0, id);
		}
	}
	sqlite3_finalize(s);
	if (bad) {
		*err = sqlite3_mprintf("rbtrace: out of memory");
		return SQLITE_NOMEM;
	}
	if (rc != SQLITE_DONE) {
		*err = sqlite3_mprintf("rbtrace: reading the database failed: %s", sqlite3_errmsg(db));
		return rc;
	}
	ids->loaded |= 1u << q;
	return SQLITE_OK;
}

static void ids_free(struct ids *ids)
{
	for (size_t k = 0; k < IDS_KINDS; k++)
		rb_idmap_free(&ids->m[k]);
	ids->loaded = 0;
}

/* The database's id of @o (0 for none), or -1 with *@err when the database has no such row. */
static int64_t id_of(struct ids *ids, struct rb_feed_obj *o, char **err)
{
	if (!o)
		return 0;
	if (o->id)
		return o->id;
	uint64_t id = 0;
	const char *what = "";
	size_t q = o->kind == RB_OBJ_DSO ? IDS_DSO : o->kind == RB_OBJ_SYM ? IDS_SYM : o->kind == RB_OBJ_THREAD ? IDS_THREAD
		 : o->kind == RB_OBJ_COMM ? IDS_COMM : IDS_EVSEL;
	if (ids_load(ids, q, err) != SQLITE_OK)
		return -1;
	switch (o->kind) {
	case RB_OBJ_DSO:
		id = rb_idmap_find(&ids->m[IDS_DSO], fnv(o->name), fnv(o->build_id), 0);
		what = "object";
		break;
	case RB_OBJ_SYM: {
		int64_t dso = id_of(ids, o->dso, err);
		if (dso < 0)
			return -1;
		id = rb_idmap_find(&ids->m[IDS_SYM], (uint64_t)dso, o->a, fnv(o->name) ^ (o->b * 0x9e3779b97f4a7c15ULL));
		what = "symbol";
		break;
	}
	case RB_OBJ_THREAD: {
		uint64_t n = rb_idmap_find(&ids->m[IDS_THREAD], (uint64_t)o->pid, (uint64_t)o->tid, THREAD_COUNT);
		if (n)
			id = rb_idmap_find(&ids->m[IDS_THREAD], (uint64_t)o->pid, (uint64_t)o->tid, o->a < n ? o->a : n - 1);
		what = "thread";
		break;
	}
	case RB_OBJ_COMM:
		id = rb_idmap_find(&ids->m[IDS_COMM], fnv(o->name), o->a, (o->b & 1) | ((uint64_t)(o->pid + 1) << 1));
		if (!id)
			id = rb_idmap_find(&ids->m[IDS_COMM], fnv(o->name), o->a, o->b & 1);
		what = "comm";
		break;
	case RB_OBJ_EVSEL:
		id = rb_idmap_find(&ids->m[IDS_EVSEL], fnv(o->name), 0, 0);
		what = "event";
		break;
	}
	if (!id) {
		if (o->kind == RB_OBJ_THREAD)
			*err = sqlite3_mprintf("rbtrace: the database has no row for thread %lld/%lld: was it made "
					       "from this recording?", (long long)o->pid, (long long)o->tid);
		else
			*err = sqlite3_mprintf("rbtrace: the database has no row for %s '%s': was it made from this "
					       "recording, with these options?", what, o->name);
		o->id = -1;
		return -1;
	}
	return o->id = (int64_t)id;
}

/* ------------------------------------------------------------ the tables */

struct vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	enum rb_feed_table table;
	int ready;                 /* the recording checked (ids are read as rows need them) */
	struct ids ids;
	struct rb_recording rec;
	sqlite3_stmt *gap_stmt;    /* is a loss in the gaps table (check_gap) */
};

struct cursor {
	sqlite3_vtab_cursor base;
	struct rb_feed *feed;              /* one decoding, or two read as one (start_split) */
	const struct rb_feed_rows *rows;   /* the batch being read (NULL: at the end), row i of it */
	size_t i;
};

static const char BRANCHES_SCHEMA[] =
	"CREATE TABLE x(id integer, evsel_id bigint, machine_id bigint, thread_id bigint, comm_id bigint,"
	" dso_id bigint, symbol_id bigint, sym_offset bigint, ip bigint, time bigint, cpu integer,"
	" to_dso_id bigint, to_symbol_id bigint, to_sym_offset bigint, to_ip bigint, period bigint,"
	" weight bigint, transaction_ bigint, data_src bigint, branch_type integer, in_tx boolean,"
	" call_path_id bigint, insn_count bigint, cyc_count bigint, flags integer,"
	" pid integer HIDDEN, tid integer HIDDEN)";

static const char CALLS_SCHEMA[] =
	"CREATE TABLE x(id integer, thread_id bigint, comm_id bigint, call_path_id bigint, call_time bigint,"
	" return_time bigint, branch_count bigint, call_id bigint, return_id bigint, parent_call_path_id bigint,"
	" flags integer, parent_id bigint, insn_count bigint, cyc_count bigint, pid integer HIDDEN,"
	" tid integer HIDDEN)";

/* Per table: its schema and its columns for time, cpu, pid and tid (-1: none). */
static const struct table_info {
	const char *schema;
	int time, cpu, pid, tid, id;
} TABLES[] = {
	[RB_FEED_BRANCHES] = { BRANCHES_SCHEMA, RBC_TIME, RBC_CPU, RBC_PID, RBC_TID, RBC_ID },
	[RB_FEED_CALLS] = { CALLS_SCHEMA, RCC_CALL_TIME, -1, RCC_PID, RCC_TID, -1 },
};

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc, (void)argv;
	enum rb_feed_table table = *(const enum rb_feed_table *)aux;
	int rc = sqlite3_declare_vtab(db, TABLES[table].schema);
	if (rc != SQLITE_OK)
		return rc;
	struct vtab *v = sqlite3_malloc(sizeof(*v));
	if (!v) {
		*err = sqlite3_mprintf("rbtrace: out of memory");
		return SQLITE_NOMEM;
	}
	memset(v, 0, sizeof(*v));
	v->db = db;
	v->table = table;
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *base)
{
	struct vtab *v = (struct vtab *)base;
	ids_free(&v->ids);
	sqlite3_finalize(v->gap_stmt);
	rb_recording_close(&v->rec);
	sqlite3_free(v);
	return SQLITE_OK;
}

/*
 * The plan: idxStr holds one letter per argument xFilter gets, saying what
 * it bounds: 'e' time =, 'g' time >, 'G' time >=, 'l' time <, 'L' time <=,
 * 'c' cpu =, 'p' pid =, 't' tid =.
 */
static int vt_best_index(sqlite3_vtab *base, sqlite3_index_info *ii)
{
	const struct table_info *t = &TABLES[((struct vtab *)base)->table];
	char plan[64];
	int n = 0;
	double cost = 1e9;
	for (int i = 0; i < ii->nConstraint && n < (int)sizeof(plan) - 1; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (!c->usable)
			continue;
		char l = 0;
		if (c->iColumn == t->time) {
			switch (c->op) {
			case SQLITE_INDEX_CONSTRAINT_EQ: l = 'e'; break;
			case SQLITE_INDEX_CONSTRAINT_GT: l = 'g'; break;
			case SQLITE_INDEX_CONSTRAINT_GE: l = 'G'; break;
			case SQLITE_INDEX_CONSTRAINT_LT: l = 'l'; break;
			case SQLITE_INDEX_CONSTRAINT_LE: l = 'L'; break;
			}
		} else if (c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			l = c->iColumn == t->cpu ? 'c' : c->iColumn == t->pid ? 'p' : c->iColumn == t->tid ? 't' : 0;
		}
		if (!l)
			continue;
		plan[n++] = l;
		ii->aConstraintUsage[i].argvIndex = n;
		cost /= l == 'e' ? 1000 : strchr("gGlL", l) ? 10 : 4;
	}
	plan[n] = 0;
	/* idxNum 1: no column that names an object is read (colUsed), so none is looked up */
	if (((struct vtab *)base)->table == RB_FEED_BRANCHES && sqlite3_libversion_number() >= 3010000) {   /* colUsed: 3.10 */
		const sqlite3_uint64 objs = 1ull << RBC_EVSEL | 1ull << RBC_THREAD | 1ull << RBC_COMM | 1ull << RBC_DSO |
					    1ull << RBC_SYMBOL | 1ull << RBC_SYM_OFFSET | 1ull << RBC_TO_DSO |
					    1ull << RBC_TO_SYMBOL | 1ull << RBC_TO_SYM_OFFSET;
		ii->idxNum = !(ii->colUsed & objs);
	}
	ii->idxStr = sqlite3_mprintf("%s", plan);
	ii->needToFreeIdxStr = 1;
	ii->estimatedCost = cost;
	ii->estimatedRows = (sqlite3_int64)(cost / 10);
	if (ii->nOrderBy == 1 && t->id >= 0 && ii->aOrderBy[0].iColumn == t->id && !ii->aOrderBy[0].desc) {
		ii->orderByConsumed = 1;
		ii->idxNum |= 2;                /* rows in id order: one decoding */
	}
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
	(void)base;
	struct cursor *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	rb_feed_stop(c->feed);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int set_error(struct vtab *v, char *msg)
{
	sqlite3_free(v->base.zErrMsg);
	v->base.zErrMsg = msg;
	return SQLITE_ERROR;
}

/*
 * A loss the decoding met must be one the export met (in its gaps table):
 * if not, the decoding is not the export's (a binary missing now, say) and
 * its rows would be silently short. SQLITE_OK or an error.
 */
static int check_gap(struct vtab *v, const struct rb_feed_obj *g)
{
	if (!v->gap_stmt &&
	    sqlite3_prepare_v2(v->db, "SELECT 1 FROM main.gaps WHERE cpu = ? AND time_start = ? AND time_end = ?"
			       " AND reason = ? LIMIT 1", -1, &v->gap_stmt, NULL) != SQLITE_OK)
		return set_error(v, sqlite3_mprintf("rbtrace: the database has no gaps table: %s",
						    sqlite3_errmsg(v->db)));
	sqlite3_stmt *s = v->gap_stmt;
	sqlite3_bind_int64(s, 1, g->pid);
	sqlite3_bind_int64(s, 2, (int64_t)g->a);
	sqlite3_bind_int64(s, 3, (int64_t)g->b);
	sqlite3_bind_text(s, 4, g->name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return SQLITE_OK;
	return set_error(v, sqlite3_mprintf("rbtrace: decoding the recording again met a loss the export did not "
					    "(%s at %llu on CPU %lld: %s): is a binary it used missing now?", g->name,
					    (unsigned long long)g->a, (long long)g->pid, g->build_id));
}

/* vt_next past the rows at hand: the feed's next batch, and losses, which are checked, not rows. */
static __attribute__((noinline)) int next_batch(struct cursor *c, struct vtab *v)
{
	int status;
	char msg[512];
	for (;;) {
		if (c->rows && c->i < c->rows->n) {
			if (!c->rows->gap[c->i])
				return SQLITE_OK;
			if (check_gap(v, c->rows->gap[c->i]) != SQLITE_OK) {
				c->rows = NULL;
				return SQLITE_ERROR;
			}
			c->i++;
			continue;
		}
		if (!(c->rows = rb_feed_next(c->feed, &status, msg, sizeof(msg))))
			return status ? set_error(v, sqlite3_mprintf("rbtrace: %s", msg)) : SQLITE_OK;
		c->i = 0;
	}
}

/* The next row: a count reads tens of millions, so the common one is a few instructions. */
static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	if (c->rows && ++c->i < c->rows->n && !c->rows->gap[c->i])
		return SQLITE_OK;
	return next_batch(c, (struct vtab *)cur->pVtab);
}

/*
 * A time bound from a constraint's value: @up rounds a real down (an upper
 * bound), else up. 0, -1 when nothing can match (NULL), 1 for no bound.
 * SQLite checks every constraint again (none is omitted), so a bound only
 * has to hold every row that matches.
 */
static int time_arg(sqlite3_value *a, int up, int64_t *t)
{
	switch (sqlite3_value_numeric_type(a)) {
	case SQLITE_INTEGER:
		*t = sqlite3_value_int64(a);
		return 0;
	case SQLITE_FLOAT: {
		double d = sqlite3_value_double(a);
		if (d > 9.2e18 || d < -9.2e18)
			*t = d > 0 ? INT64_MAX : INT64_MIN;
		else
			*t = up ? (int64_t)(d >= 0 ? d : d - 0.999999999) : (int64_t)(d >= 0 ? d + 0.999999999 : d);
		return 0;
	}
	case SQLITE_NULL:
		return -1;    /* the comparison selects nothing */
	default:
		return 1;     /* text or a blob: no bound here (SQLite compares them itself: any number is less) */
	}
}

/*
 * The queues whose trace starts by @hi (their first trace_index entry): the
 * ones a window ending at @hi waits for. No index: none, decode to the end.
 * 0; 1 when the index has queues but none starts by @hi (a queue's branches
 * follow its first sync point, so the window has none); -1 out of memory.
 */
static int window_queues(sqlite3 *db, int64_t hi, uint32_t **out, size_t *n)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT queue FROM main.trace_index GROUP BY queue HAVING min(time) <= ?", -1, &s,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(s, 1, hi);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			uint32_t *q = realloc(*out, cap * sizeof(*q));
			if (!q) {
				sqlite3_finalize(s);
				free(*out);
				*out = NULL;
				return -1;
			}
			*out = q;
		}
		(*out)[(*n)++] = (uint32_t)sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	if (*n || sqlite3_prepare_v2(db, "SELECT 1 FROM main.trace_index LIMIT 1", -1, &s, NULL) != SQLITE_OK)
		return 0;
	int indexed = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return indexed;
}

/*
 * The seek points a window from @lo starts at: per queue, the export's last
 * trace_seek row before @lo (none in databases made before the table).
 * 0, or -1 out of memory.
 */
static int window_seek(sqlite3 *db, int64_t lo, struct rb_seek_ev **out, uint64_t **seq, size_t *n)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	*out = NULL;
	*seq = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT queue, cpu, time, tsc, pos, aux_pos, start_off, start_ord, start_from,"
			       " start_to, start_flags, sample_seq FROM main.trace_seek WHERE id IN"
			       " (SELECT max(id) FROM main.trace_seek WHERE time < ? GROUP BY queue)"
			       " AND source = 'intel_pt'", -1, &s, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(s, 1, lo);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			struct rb_seek_ev *v = realloc(*out, cap * sizeof(*v));
			uint64_t *q = v ? realloc(*seq, cap * sizeof(*q)) : NULL;
			if (v)
				*out = v;
			if (q)
				*seq = q;
			if (!v || !q) {
				sqlite3_finalize(s);
				free(*out);
				free(*seq);
				*out = NULL;
				*seq = NULL;
				return -1;
			}
		}
		struct rb_seek_ev *e = &(*out)[*n];
		memset(e, 0, sizeof(*e));
		e->source = "intel_pt";
		e->queue = (uint32_t)sqlite3_column_int64(s, 0);
		e->cpu = (int32_t)sqlite3_column_int64(s, 1);
		e->time = (uint64_t)sqlite3_column_int64(s, 2);
		e->tsc = (uint64_t)sqlite3_column_int64(s, 3);
		e->pos = (uint64_t)sqlite3_column_int64(s, 4);
		e->aux_pos = (uint64_t)sqlite3_column_int64(s, 5);
		e->start_off = (uint64_t)sqlite3_column_int64(s, 6);
		e->start_ord = (uint32_t)sqlite3_column_int64(s, 7);
		e->start_from = (uint64_t)sqlite3_column_int64(s, 8);
		e->start_to = (uint64_t)sqlite3_column_int64(s, 9);
		e->start_flags = (uint32_t)sqlite3_column_int64(s, 10);
		(*seq)[(*n)++] = (uint64_t)sqlite3_column_int64(s, 11);
	}
	sqlite3_finalize(s);
	return 0;
}

/*
 * A whole-trace scan that reads no object and asks no order (a count, a
 * histogram) is decoded in two parts at once, one session each, on as
 * many threads in all as one would use: the first from the start up to a
 * seek point near the middle (the samples id the export had reached
 * there), the second from that seek point on, as a window starts
 * (window_seek); the cursor reads their batches as they come (feed.h).
 * One session's decoding threads wait at every window's end for its
 * thread that takes the events in order; two sessions never wait for each
 * other. Nothing is started (0, c->feed NULL) without a seek point, a
 * second processor, or with RBTRACE_NO_SPLIT; -1 with @msg on failure.
 */
static int start_split(struct vtab *v, struct cursor *c, const struct rb_feed_filter *f, char *msg, size_t len)
{
	int jobs = v->rec.so.jobs;
	sqlite3_stmt *s;
	if (jobs < 2 || getenv("RBTRACE_NO_SPLIT") ||
	    sqlite3_prepare_v2(v->db, "SELECT time FROM main.trace_seek WHERE source = 'intel_pt' ORDER BY"
			       " abs(sample_seq - (SELECT max(sample_seq) FROM main.trace_seek) / 2) LIMIT 1",
			       -1, &s, NULL) != SQLITE_OK)
		return 0;
	int64_t t = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	struct rb_seek_ev *seek = NULL;
	uint64_t *seq = NULL;
	size_t n = 0;
	if (t < 0 || t == INT64_MAX)
		return 0;
	if (window_seek(v->db, t + 1, &seek, &seq, &n) < 0) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	uint64_t split = 0, seek_lo = 0;
	for (size_t i = 0; i < n; i++) {
		split = seq[i] > split ? seq[i] : split;
		seek_lo = seek[i].time + 1 > seek_lo ? seek[i].time + 1 : seek_lo;
	}
	int rc = 0;
	if (n && split) {
		struct rb_session_opts so = v->rec.so;
		so.jobs = jobs / 2;
		struct rb_feed_filter first = *f, second = *f;
		first.id_hi = split;
		second.id_lo = split;
		second.seek = seek;
		second.seek_seq = seq;
		second.nseek = n;
		second.seek_lo = seek_lo;
		struct rb_feed *two;
		rc = rb_feed_start(&c->feed, &so, &first, NULL, msg, len);
		if (!rc)
			rc = rb_feed_start(&two, &so, &second, c->feed, msg, len);
		if (!rc && getenv("RBTRACE_DEBUG"))
			fprintf(stderr, "rbtrace: decoded in two parts, the second from %zu seek point(s) on (samples id %llu)\n",
				n, (unsigned long long)split);
	}
	free(seek);
	free(seq);
	return rc;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc, sqlite3_value **argv)
{
	struct cursor *c = (struct cursor *)cur;
	struct vtab *v = (struct vtab *)cur->pVtab;
	rb_feed_stop(c->feed);
	c->feed = NULL;
	c->rows = NULL;
	if (!v->ready) {
		char *err = NULL;
		int rc = rb_recording_open(v->db, &v->rec, &err);
		v->ids.db = v->db;
		if (rc != SQLITE_OK)
			return set_error(v, err);
		v->ready = 1;
	}
	int64_t lo = 0, hi = INT64_MAX;
	struct rb_feed_filter f = { .table = v->table, .time_hi = UINT64_MAX, .cpu = -1, .pid = -1, .tid = -1 };
	int none = 0;
	for (int i = 0; i < argc && idxStr && idxStr[i]; i++) {
		char l = idxStr[i];
		int64_t t;
		if (strchr("egGlL", l)) {
			int r = time_arg(argv[i], l == 'l' || l == 'L', &t);
			if (r) {
				none |= r < 0;
				continue;
			}
			if (l == 'e' || l == 'G' || (l == 'g' && t < INT64_MAX))
				lo = t + (l == 'g') > lo ? t + (l == 'g') : lo;
			if (l == 'e' || l == 'L' || (l == 'l' && t > INT64_MIN))
				hi = t - (l == 'l') < hi ? t - (l == 'l') : hi;
			if (l == 'g' && t == INT64_MAX)
				none = 1;
		} else {
			if (sqlite3_value_numeric_type(argv[i]) != SQLITE_INTEGER) {
				none |= sqlite3_value_type(argv[i]) != SQLITE_TEXT;   /* NULL, a fraction: no cpu or id */
				continue;
			}
			int64_t x = sqlite3_value_int64(argv[i]);
			if (l == 'c')
				f.cpu = x;
			else if (l == 'p')
				f.pid = x;
			else
				f.tid = x;
		}
	}
	if (none || hi < 0 || hi < lo)
		return SQLITE_OK;               /* no row: the cursor is at its end */
	f.time_lo = lo > 0 ? (uint64_t)lo : 0;
	f.time_hi = (uint64_t)hi;
	uint32_t *queues = NULL;
	if (v->table == RB_FEED_BRANCHES && hi < INT64_MAX) {
		int r = window_queues(v->db, hi, &queues, &f.nqueues);
		if (r < 0)
			return set_error(v, sqlite3_mprintf("rbtrace: out of memory"));
		if (r > 0) {
			if (getenv("RBTRACE_DEBUG"))
				fprintf(stderr, "rbtrace: the window ends before every queue's trace: nothing decoded\n");
			return SQLITE_OK;       /* no row: the cursor is at its end */
		}
	}
	f.queues = queues;
	struct rb_seek_ev *seek = NULL;
	uint64_t *seq = NULL;
	if (v->table == RB_FEED_BRANCHES && lo > 0 && !getenv("RBTRACE_NO_SEEK") &&
	    window_seek(v->db, lo, &seek, &seq, &f.nseek) < 0) {
		free(queues);
		return set_error(v, sqlite3_mprintf("rbtrace: out of memory"));
	}
	f.seek = seek;
	f.seek_seq = seq;
	f.lean = v->table == RB_FEED_BRANCHES && (idxNum & 1);
	char msg[512];
	int rc = 0;
	if (f.lean && !(idxNum & 2) && lo <= 0 && hi == INT64_MAX)
		rc = start_split(v, c, &f, msg, sizeof(msg));
	if (!rc && !c->feed)
		rc = rb_feed_start(&c->feed, &v->rec.so, &f, NULL, msg, sizeof(msg));
	free(queues);
	free(seek);
	free(seq);
	if (rc < 0) {
		rb_feed_stop(c->feed);
		c->feed = NULL;
		return set_error(v, sqlite3_mprintf("rbtrace: %s", msg));
	}
	return vt_next(cur);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cursor *)cur)->rows == NULL;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct cursor *c = (struct cursor *)cur;
	struct vtab *v = (struct vtab *)cur->pVtab;
	struct rb_feed_obj *o = NULL;
	int64_t x;
	if (v->table == RB_FEED_CALLS) {
		if (col < 0 || col >= RCC_COUNT)
			return SQLITE_RANGE;
		if (col != RCC_THREAD && col != RCC_COMM) {
			sqlite3_result_int64(ctx, c->rows->c[c->i].v[col]);
			return SQLITE_OK;
		}
		o = col == RCC_THREAD ? c->rows->c[c->i].thread : c->rows->c[c->i].comm;
	} else {
		const struct rb_feed_branch *b = &c->rows->b[c->i];
		/* NULL when lean: xBestIndex saw no column below read */
		const struct rb_feed_names *n = c->rows->names ? &c->rows->names[c->i] : NULL;
		switch (col) {
		case RBC_ID: x = b->id; break;
		case RBC_MACHINE: case RBC_PERIOD: x = 1; break;
		case RBC_IP: x = b->ip; break;
		case RBC_TIME: x = b->time; break;
		case RBC_CPU: x = b->cpu; break;
		case RBC_TO_IP: x = b->to_ip; break;
		case RBC_WEIGHT: case RBC_TRANSACTION: case RBC_DATA_SRC: case RBC_CALL_PATH: x = 0; break;
		case RBC_BRANCH_TYPE: x = b->flags & ~(uint32_t)RB_IP_FLAG_IN_TX; break;
		case RBC_IN_TX: x = !!(b->flags & RB_IP_FLAG_IN_TX); break;
		case RBC_INSN_COUNT: x = b->insn_count; break;
		case RBC_CYC_COUNT: x = b->cyc_count; break;
		case RBC_FLAGS: x = b->flags; break;
		case RBC_PID: x = b->pid; break;
		case RBC_TID: x = b->tid; break;
		case RBC_SYM_OFFSET: x = n ? n->sym_offset : 0; break;
		case RBC_TO_SYM_OFFSET: x = n ? n->to_sym_offset : 0; break;
		case RBC_EVSEL: o = n ? n->evsel : NULL; goto object;
		case RBC_THREAD: o = n ? n->thread : NULL; goto object;
		case RBC_COMM: o = n ? n->comm : NULL; goto object;
		case RBC_DSO: o = n ? n->dso : NULL; goto object;
		case RBC_SYMBOL: o = n ? n->sym : NULL; goto object;
		case RBC_TO_DSO: o = n ? n->to_dso : NULL; goto object;
		case RBC_TO_SYMBOL: o = n ? n->to_sym : NULL; goto object;
		default:
			return SQLITE_RANGE;
		}
		sqlite3_result_int64(ctx, x);
		return SQLITE_OK;
	}
object:;
	char *err = NULL;
	int64_t id = id_of(&v->ids, o, &err);
	if (id < 0) {
		if (err)
			sqlite3_result_error(ctx, err, -1);
		else
			sqlite3_result_error(ctx, "rbtrace: a row names what the database does not hold", -1);
		sqlite3_free(err);
		return SQLITE_ERROR;
	}
	sqlite3_result_int64(ctx, id);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct cursor *c = (struct cursor *)cur;
	*rowid = ((struct vtab *)cur->pVtab)->table == RB_FEED_CALLS ? c->rows->c[c->i].v[RCC_ID] : c->rows->b[c->i].id;
	return SQLITE_OK;
}

static const sqlite3_module lazy_module = {
	.iVersion = 0,
	.xCreate = NULL,             /* eponymous only: FROM branches, nothing to create */
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

int sqlite3_rbtrace_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

int sqlite3_rbtrace_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	static const enum rb_feed_table branches = RB_FEED_BRANCHES, calls = RB_FEED_CALLS;
	SQLITE_EXTENSION_INIT2(api);
	int rc = sqlite3_create_module(db, "branches", &lazy_module, (void *)&branches);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module(db, "calls", &lazy_module, (void *)&calls);
	if (rc != SQLITE_OK)
		*err = sqlite3_mprintf("rbtrace: cannot register its tables: %s", sqlite3_errmsg(db));
	return rc;
}
