/*
 * store.c - see store.h. Workload: millions of sample rows in one run.
 * Every insert is a prepared statement reused with new bindings, all rows go
 * in one transaction with journaling and syncing off (the file is not live
 * under its final name until the rename, so a crash loses nothing that was
 * promised), and indexes are built after the load.
 *
 * Ids follow perf's db-export: each table's row 0 is "unknown"; a thread,
 * comm, object, symbol or call path gets its id the first time a sample or
 * context switch refers to it, main thread first.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store.h"
#include "schema.sql.h"
#include "decoder/calls/calls.h"
#include "decoder/calls/idmap.h"

/* PERF_MEM_DATA_SRC_NONE: op, level, snoop, lock and TLB all "not available" */
#define PERF_MEM_DATA_SRC_NONE 0x5080021ULL


static const char *const STMT_SQL[RB_T_COUNT] = {
	[RB_T_EVSEL] = "INSERT INTO selected_events VALUES (?, ?)",
	[RB_T_MACHINE] = "INSERT INTO machines VALUES (?, ?, ?)",
	[RB_T_THREAD] = "INSERT INTO threads VALUES (?, ?, ?, ?, ?)",
	[RB_T_COMM] = "INSERT INTO comms VALUES (?, ?, ?, ?, ?)",
	[RB_T_COMM_THREAD] = "INSERT INTO comm_threads VALUES (?, ?, ?)",
	[RB_T_DSO] = "INSERT INTO dsos VALUES (?, ?, ?, ?, ?)",
	[RB_T_SYMBOL] = "INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?)",
	[RB_T_BRANCH_TYPE] = "INSERT INTO branch_types VALUES (?, ?)",
	[RB_T_SAMPLE] = "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_CALL_PATH] = "INSERT INTO call_paths VALUES (?, ?, ?, ?)",
	[RB_T_SWITCH] = "INSERT INTO context_switches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_GAP] = "INSERT INTO gaps VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_AUX] = "INSERT INTO aux_buffers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_IMC] = "INSERT INTO imc_records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_IMC_COUNTER] = "INSERT INTO imc_counters VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_STAT] = "INSERT OR REPLACE INTO decode_stats VALUES (?, ?)",
	[RB_T_CALL] = "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_FTRACE] = "INSERT INTO ftrace_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_PTWRITE] = "INSERT INTO ptwrite VALUES (?, ?, ?)",
	[RB_T_CBR] = "INSERT INTO cbr VALUES (?, ?, ?, ?)",
	[RB_T_MWAIT] = "INSERT INTO mwait VALUES (?, ?, ?)",
	[RB_T_PWRE] = "INSERT INTO pwre VALUES (?, ?, ?, ?)",
	[RB_T_EXSTOP] = "INSERT INTO exstop VALUES (?, ?)",
	[RB_T_PWRX] = "INSERT INTO pwrx VALUES (?, ?, ?, ?)",
	[RB_T_PATH_STAT] = "INSERT INTO call_path_stats VALUES (?, ?, ?, ?, ?, ?, ?)",
	[RB_T_EDGE] = "INSERT INTO branch_edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_SYNC] = "INSERT INTO trace_index VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[RB_T_SEEK] = "INSERT INTO trace_seek VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
};

#define BATCH_ROWS 2048
#define MAX_COLS 25
#define MULTI_ROWS 32         /* rows of one table in a run are inserted this many per statement */
/*
 * Up to 64k rows (13 MB) in flight: the decoding thread runs ahead of
 * SQLite, and on a busy machine each thread goes on through the other's
 * lost time slices instead of stalling on a full (or empty) short queue.
 */
#define QUEUE_BATCHES 32
/*
 * A waiting thread is woken once this many batches are ready for it, not for
 * each: a wake-up is a system call and an interrupt to the other core.
 */
#define WAKE_BATCHES 8

/* A row to bind: integers, and texts (bit i of @text) as pointers, or once queued as offsets into the batch's arena. */
struct qrow {
	uint8_t id, n;
	uint32_t text;
	int64_t v[MAX_COLS];          /* a text's pointer is kept as an integer too */
};
struct batch {
	struct qrow rows[BATCH_ROWS];
	int n;
	char *arena;                  /* text values of the rows */
	size_t arena_len, arena_cap;
	struct batch *next;
};

struct rb_store {
	struct rb_store_opts o;
	char *final_path, *tmp_path;
	sqlite3 *db;
	sqlite3_stmt *st[RB_T_COUNT];
	sqlite3_stmt *multi[RB_T_COUNT];    /* the same for MULTI_ROWS rows at once (NULL: rows one by one) */
	struct rb_sink sink;
	struct rb_ftrace_sink ftrace_sink;
	int partial;                  /* rb_store_note(st, "partial", 1) was called */
	struct rb_machine *m;
	uint64_t *evsel_db_id;        /* per evsel index, 0 until exported */
	uint64_t branches_evsel;      /* the synthesized "branches" event, 0 until a branch comes */
	struct {                      /* the last branch's thread, as exported: the next one of it exports nothing */
		const struct rb_thread *thread, *main;
		const struct rb_comm *comm, *thread_comm;
		uint32_t generation;
		uint64_t thread_id, comm_id;
	} lt;
	struct {                      /* ids of (dso, symbol) pairs met lately: a branch's two ids without the id maps */
		const struct rb_dso *dso;
		const struct rb_sym *sym;
		uint64_t dso_id, sym_id;
	} seen[256];
	uint64_t insns_evsel;         /* the synthesized "instructions" event */
	struct rb_calls *calls;       /* calls and call paths (decoder/calls), with our ids as its keys */
	size_t nr_evsels;
	struct { const char *name; uint64_t id; } synth[16];   /* synthesized events; names live as long as the session */
	size_t nr_synth;
	uint64_t last[RB_T_COUNT];       /* last id per table */
	uint32_t rowid_first;         /* statements whose first value is their table's rowid (INTEGER PRIMARY KEY) */
	int64_t max_rowid[RB_T_COUNT];   /* largest rowid bind_row has inserted by each of those (either thread: one at a time) */
	uint64_t rows[RB_T_COUNT];
	struct rb_idmap syms;
	struct rb_idmap objs;             /* ids of the session's threads, comms and dsos, keyed by object (pointer, kind, thread generation) */
	uint8_t *call_comms;          /* by comm id: 1 once a call of that comm is written (comms.has_calls) */
	size_t call_comms_cap;
	int call_comms_lost;          /* out of memory for it: set has_calls from the calls table */
	/* aggregates (call_path_stats, branch_edges), written at the end */
	struct pstat { uint64_t calls, total, children, branches, insns, cycles; } *pstats;   /* by call path id */
	size_t nr_pstats, cap_pstats;  /* zeroed (ids below it used), allocated: the rest is never touched */
	struct edge { uint64_t from_dso, from_sym, from_off, from, to_dso, to_sym, to_off, to, type, count; } *edges;
	size_t nr_edges, cap_edges;
	struct rb_idmap edge_ids;     /* (from dso, from, to) -> index in edges + 1 */
	int failed;                   /* set by either thread (atomic) */
	int failed_nomem;             /* the first failure was memory running out */
	char err[512];
	/* writer thread */
	int threaded;
	pthread_t writer;
	pthread_mutex_t mu;
	pthread_cond_t cv_free, cv_full;       /* the decoding thread waits on one, the writer on the other */
	struct batch *full_head, *full_tail;   /* waiting for the writer */
	struct batch *free_list;
	int nr_batches, nr_free, nr_full;
	int free_waiter, full_waiter;          /* a thread is waiting on cv_free / cv_full */
	int stopping;                 /* no more batches will come */
	struct batch *cur;            /* being filled by the decoding thread */
};

/* ------------------------------------------------------------ helpers */

/*
 * SQLite says "database or disk is full" or "disk I/O error" and often keeps
 * no errno: tell the user which limit it met (the system's errno, the file
 * size limit, a full file system), or "" when it is not an I/O failure.
 */
static const char *io_hint(struct rb_store *st, char *buf, size_t n)
{
	int code = st->db ? sqlite3_errcode(st->db) : SQLITE_OK;
	if (code != SQLITE_FULL && code != SQLITE_IOERR)
		return "";
	int se = sqlite3_system_errno(st->db);
	struct rlimit rl;
	struct statvfs sv;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", st->tmp_path ? st->tmp_path : ".");
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	if (se && se != EFBIG)
		snprintf(buf, n, " (%s)", strerror(se));
	else if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(buf, n, " (the file size limit, ulimit -f, is %llu bytes)", (unsigned long long)rl.rlim_cur);
	else if (statvfs(slash ? (dir[0] ? dir : "/") : ".", &sv) == 0 &&
		 (uint64_t)sv.f_bavail * sv.f_frsize < (64u << 20))
		snprintf(buf, n, " (no space left on the file system: %llu KiB free)",
			 (unsigned long long)sv.f_bavail * sv.f_frsize / 1024);
	else if (se)
		snprintf(buf, n, " (%s)", strerror(se));
	else
		return "";
	return buf;
}

static int fail(struct rb_store *st, const char *what)
{
	char hint[160];
	if (!__atomic_exchange_n(&st->failed, 1, __ATOMIC_ACQ_REL)) {
		st->failed_nomem = !strcmp(what, "out of memory") || (st->db && sqlite3_errcode(st->db) == SQLITE_NOMEM);
		snprintf(st->err, sizeof(st->err), "%s: %s: %s%s", st->tmp_path ? st->tmp_path : st->o.path,
			 what, st->db ? sqlite3_errmsg(st->db) : "cannot open", io_hint(st, hint, sizeof(hint)));
	}
	return -1;
}

/*
 * One row: typed values, so that a text column cannot be handed an integer
 * (ROW's list is checked by the compiler; the count against the statement).
 */
static inline struct rb_tval I(int64_t x) { return (struct rb_tval){ 0, x, NULL }; }
static inline struct rb_tval T(const char *x) { return (struct rb_tval){ 1, 0, x }; }
#define ROW(st, id, ...) run(st, id, (const struct rb_tval[]){ __VA_ARGS__ }, \
			     sizeof((const struct rb_tval[]){ __VA_ARGS__ }) / sizeof(struct rb_tval))

static inline void pack_row(struct qrow *r, enum rb_table id, const struct rb_tval *v, int n)
{
	uint32_t text = 0;
	r->id = (uint8_t)id;
	r->n = (uint8_t)n;
	for (int i = 0; i < n && i < MAX_COLS; i++) {
		r->v[i] = v[i].text ? (int64_t)(intptr_t)v[i].s : v[i].i;
		text |= (uint32_t)(v[i].text != 0) << i;
	}
	r->text = text;
}

/*
 * Bind one row (its texts in @arena when queued, else NULL); the caller owns
 * the connection. A rowid one above the table's largest goes in as NULL:
 * SQLite then makes the same rowid from the b-tree's right edge, where an
 * explicit one costs a search from the root (a fifth of the writer's time).
 */
static int bind_row(struct rb_store *st, sqlite3_stmt *s, int first, const struct qrow *r, const char *arena)
{
	int i = 0;
	if (st->rowid_first >> r->id & 1) {
		int64_t *max = &st->max_rowid[r->id];
		int rc = r->v[0] == *max + 1 ? sqlite3_bind_null(s, first) : sqlite3_bind_int64(s, first, r->v[0]);
		if (rc != SQLITE_OK)
			return fail(st, "bind");
		if (r->v[0] > *max)
			*max = r->v[0];
		i = 1;
	}
	for (; i < r->n; i++) {
		int rc = !(r->text >> i & 1) ? sqlite3_bind_int64(s, first + i, r->v[i]) :
			 sqlite3_bind_text(s, first + i, arena ? arena + r->v[i] : (const char *)(intptr_t)r->v[i], -1,
					   SQLITE_STATIC);
		if (rc != SQLITE_OK)
			return fail(st, "bind");
	}
	return 0;
}

/* Rows *@r[0, n) of one table: MULTI_ROWS or one (SQLite's work per statement is paid once for many rows). */
static int exec_rows(struct rb_store *st, const struct qrow *const *r, int n, const char *arena)
{
	sqlite3_stmt *s = n == MULTI_ROWS ? st->multi[r[0]->id] : st->st[r[0]->id];
	if (r[0]->n > MAX_COLS || r[0]->n * n != sqlite3_bind_parameter_count(s))
		return fail(st, "internal: wrong number of values for a row");
	for (int k = 0; k < n; k++)
		if (bind_row(st, s, 1 + k * r[0]->n, r[k], arena))
			return -1;
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return fail(st, STMT_SQL[r[0]->id]);
	return 0;
}

static int exec_row(struct rb_store *st, const struct qrow *r, const char *arena)
{
	return exec_rows(st, &r, 1, arena);
}

/* "INSERT INTO t VALUES (?, ?)" as MULTI_ROWS rows: "... VALUES (?, ?), (?, ?), ..." (NULL: not one) */
static char *multi_sql(const char *sql)
{
	const char *v = strstr(sql, " VALUES (");
	if (!v || strncmp(sql, "INSERT INTO ", 12))
		return NULL;
	size_t head = (size_t)(v - sql) + 8, tuple = strlen(v + 8);
	char *m = malloc(head + MULTI_ROWS * (tuple + 2) + 1);
	if (!m)
		return NULL;
	memcpy(m, sql, head);
	char *p = m + head;
	for (int k = 0; k < MULTI_ROWS; k++) {
		if (k) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		memcpy(p, v + 8, tuple);
		p += tuple;
	}
	*p = 0;
	return m;
}

/* Whether "INSERT INTO t VALUES (...)" gives t's rowid first: its first column is a lone INTEGER PRIMARY KEY. */
static int rowid_first(sqlite3 *db, const char *sql)
{
	char name[64];
	if (sscanf(sql, "INSERT INTO %63[a-z_] VALUES (", name) != 1)
		return 0;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT upper(type) = 'INTEGER' AND pk = 1 FROM pragma_table_info(?1) WHERE cid = 0)"
			       " AND (SELECT count(*) FROM pragma_table_info(?1) WHERE pk > 0) = 1", -1, &q, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	int yes = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 1;
	sqlite3_finalize(q);
	return yes;
}

/* ---------------------------------------------------------- writer thread */

/*
 * While a session runs, rows go to a writer thread through a queue of
 * batches, so that decoding and SQLite run on two cores; ids are still
 * assigned here, in the decoding thread, so nothing about the rows changes.
 * A batch copies the text values it carries (they may live on the stack).
 */
static struct batch *take_free(struct rb_store *st)
{
	struct batch *b = NULL;
	pthread_mutex_lock(&st->mu);
	while (!st->free_list && st->nr_batches >= QUEUE_BATCHES && !__atomic_load_n(&st->failed, __ATOMIC_ACQUIRE)) {
		st->free_waiter = 1;                   /* the writer is behind: wait for batches back */
		pthread_cond_wait(&st->cv_free, &st->mu);
	}
	st->free_waiter = 0;
	if (st->free_list) {
		b = st->free_list;
		st->free_list = b->next;
		st->nr_free--;
	} else if (st->nr_batches < QUEUE_BATCHES) {
		b = malloc(sizeof(*b));
		if (b) {
			b->arena = NULL;
			b->arena_cap = 0;
			st->nr_batches++;
		}
	}
	pthread_mutex_unlock(&st->mu);
	if (b) {
		b->n = 0;
		b->arena_len = 0;
		b->next = NULL;
	}
	return b;
}

/* Hand the current batch to the writer. */
static int submit(struct rb_store *st)
{
	struct batch *b = st->cur;
	st->cur = NULL;
	if (!b)
		return 0;
	pthread_mutex_lock(&st->mu);
	if (st->full_tail)
		st->full_tail->next = b;
	else
		st->full_head = b;
	st->full_tail = b;
	if (st->full_waiter && ++st->nr_full >= WAKE_BATCHES)
		pthread_cond_signal(&st->cv_full);
	pthread_mutex_unlock(&st->mu);
	return __atomic_load_n(&st->failed, __ATOMIC_ACQUIRE) ? -1 : 0;
}

/*
 * A batch's rows, table by table (each table's rows in their order), so that
 * a PT export's interleaved samples, calls and call paths still go MULTI_ROWS
 * to a statement. Every statement inserts rows with their ids given, so the
 * order between tables changes nothing in the database.
 */
static void write_batch(struct rb_store *st, const struct batch *b, const struct qrow **by_table)
{
	int start[RB_T_COUNT + 1] = { 0 };
	for (int i = 0; i < b->n; i++)
		start[b->rows[i].id + 1]++;
	for (int t = 0; t < RB_T_COUNT; t++)
		start[t + 1] += start[t];
	int fill[RB_T_COUNT];
	memcpy(fill, start, sizeof(fill));
	for (int i = 0; i < b->n; i++)
		by_table[fill[b->rows[i].id]++] = &b->rows[i];
	for (int t = 0; t < RB_T_COUNT; t++)
		for (int i = start[t]; i < start[t + 1] && !__atomic_load_n(&st->failed, __ATOMIC_ACQUIRE);) {
			int run = start[t + 1] - i >= MULTI_ROWS && st->multi[t] ? MULTI_ROWS : 1;
			exec_rows(st, by_table + i, run, b->arena);
			i += run;
		}
}

static void *writer_main(void *arg)
{
	struct rb_store *st = arg;
	const struct qrow *by_table[BATCH_ROWS];
	for (;;) {
		pthread_mutex_lock(&st->mu);
		while (!st->full_head && !st->stopping) {
			st->full_waiter = 1;
			st->nr_full = 0;
			pthread_cond_wait(&st->cv_full, &st->mu);
		}
		st->full_waiter = 0;
		if (!st->full_head) {         /* stopping, and everything is written */
			pthread_mutex_unlock(&st->mu);
			return NULL;
		}
		struct batch *b = st->full_head;
		st->full_head = b->next;
		if (!st->full_head)
			st->full_tail = NULL;
		pthread_mutex_unlock(&st->mu);
		write_batch(st, b, by_table);
		pthread_mutex_lock(&st->mu);
		b->next = st->free_list;
		st->free_list = b;
		if (++st->nr_free >= WAKE_BATCHES || __atomic_load_n(&st->failed, __ATOMIC_ACQUIRE))
			if (st->free_waiter)
				pthread_cond_signal(&st->cv_free);
		pthread_mutex_unlock(&st->mu);
	}
}

static int writer_start(struct rb_store *st)
{
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cv_free, NULL);
	pthread_cond_init(&st->cv_full, NULL);
	if (pthread_create(&st->writer, NULL, writer_main, st) != 0)
		return 0;   /* no thread: rows are written inline */
	st->threaded = 1;
	return 0;
}

/* Send what is queued, wait until it is written, and write inline from then on. */
static void writer_stop(struct rb_store *st)
{
	if (!st->threaded)
		return;
	submit(st);
	pthread_mutex_lock(&st->mu);
	st->stopping = 1;
	pthread_cond_signal(&st->cv_full);
	pthread_mutex_unlock(&st->mu);
	pthread_join(st->writer, NULL);
	st->threaded = 0;
	while (st->free_list) {
		struct batch *b = st->free_list;
		st->free_list = b->next;
		free(b->arena);
		free(b);
	}
	pthread_cond_destroy(&st->cv_free);
	pthread_cond_destroy(&st->cv_full);
	pthread_mutex_destroy(&st->mu);
}

static int queue_row(struct rb_store *st, enum rb_table id, const struct rb_tval *v, int n)
{
	struct batch *b = st->cur;
	if (!b || b->n == BATCH_ROWS) {
		if (b && submit(st) < 0)
			return -1;
		if (!(b = st->cur = take_free(st)))
			return fail(st, "out of memory");
	}
	struct qrow *r = &b->rows[b->n];
	pack_row(r, id, v, n);
	for (int i = 0; r->text && i < r->n && i < MAX_COLS; i++) {
		if (r->text >> i & 1) {
			size_t len = strlen(v[i].s) + 1;
			if (b->arena_len + len > b->arena_cap) {
				size_t cap = b->arena_cap ? 2 * b->arena_cap : 4096;
				while (cap < b->arena_len + len)
					cap *= 2;
				char *a = realloc(b->arena, cap);
				if (!a)
					return fail(st, "out of memory");
				b->arena = a;
				b->arena_cap = cap;
			}
			memcpy(b->arena + b->arena_len, v[i].s, len);
			r->v[i] = (int64_t)b->arena_len;   /* an offset into the batch's arena */
			b->arena_len += len;
		}
	}
	b->n++;
	return 0;
}

/* The external writer refused a row: its reason is the store's. */
static int writer_failed(struct rb_store *st)
{
	const char *why = st->o.writer->error(st->o.writer->ctx);
	if (!st->failed)
		snprintf(st->err, sizeof(st->err), "%s", why ? why : "the database refused a row");
	st->failed = 1;
	return -1;
}

static int run(struct rb_store *st, enum rb_table id, const struct rb_tval *v, int n)
{
	if (__atomic_load_n(&st->failed, __ATOMIC_ACQUIRE))
		return -1;
	int rc;
	if (st->o.writer) {
		rc = st->o.writer->row(st->o.writer->ctx, id, v, n) ? writer_failed(st) : 0;
	} else if (st->threaded) {
		rc = queue_row(st, id, v, n);
	} else {
		struct qrow r;
		pack_row(&r, id, v, n);
		rc = exec_row(st, &r, NULL);
	}
	if (rc == 0)
		st->rows[id]++;
	return rc;
}

/* ------------------------------------------------------------ exports */

static uint64_t export_evsel(struct rb_store *st, const struct rb_event_ref *ev)
{
	int idx = ev->index;
	if (idx < 0)
		return 0;
	if ((size_t)idx >= st->nr_evsels) {
		/* pipe mode: evsels are announced as the stream goes */
		size_t n = (size_t)idx + 16;
		uint64_t *v = realloc(st->evsel_db_id, n * sizeof(*v));
		if (!v)
			return fail(st, "out of memory"), 0;
		memset(v + st->nr_evsels, 0, (n - st->nr_evsels) * sizeof(*v));
		st->evsel_db_id = v;
		st->nr_evsels = n;
	}
	if (st->evsel_db_id[idx])
		return st->evsel_db_id[idx];
	char name[64];
	if (!ev->name)
		snprintf(name, sizeof(name), "type%u/config=%#" PRIx64 "/", ev->type, ev->config);
	st->evsel_db_id[idx] = ++st->last[RB_T_EVSEL];
	ROW(st, RB_T_EVSEL, I(st->evsel_db_id[idx]), T(ev->name ? ev->name : name));
	return st->evsel_db_id[idx];
}

/* A synthesized event (perf's "branches"): its own selected_events row, by name. */
static uint64_t export_synth_evsel(struct rb_store *st, const char *name)
{
	for (size_t i = 0; i < st->nr_synth; i++)
		if (!strcmp(st->synth[i].name, name))
			return st->synth[i].id;
	if (st->nr_synth == sizeof(st->synth) / sizeof(st->synth[0]))
		return 0;
	st->synth[st->nr_synth].name = name;
	st->synth[st->nr_synth].id = ++st->last[RB_T_EVSEL];
	ROW(st, RB_T_EVSEL, I(st->synth[st->nr_synth].id), T(name));
	return st->synth[st->nr_synth++].id;
}

/* Kinds of session objects in st->objs (a thread's key also has its generation). */
enum { OBJ_THREAD = 1, OBJ_COMM, OBJ_DSO };

static uint64_t thread_id(const struct rb_store *st, const struct rb_thread *t)
{
	return rb_idmap_find(&st->objs, (uint64_t)(uintptr_t)t, OBJ_THREAD, t->generation);
}

static uint64_t comm_id(const struct rb_store *st, const struct rb_comm *c)
{
	return rb_idmap_find(&st->objs, (uint64_t)(uintptr_t)c, OBJ_COMM, 0);
}

/* The slot holding an object's id (id 0: not exported yet, the caller sets it); NULL after failing. */
static struct rb_idkey *obj_slot(struct rb_store *st, const void *p, uint64_t kind, uint64_t gen)
{
	struct rb_idkey *k = rb_idmap_get(&st->objs, (uint64_t)(uintptr_t)p, kind, gen);
	if (!k)
		fail(st, "out of memory");
	return k;
}

static void export_thread(struct rb_store *st, struct rb_thread *t, struct rb_thread *main)
{
	struct rb_idkey *k = obj_slot(st, t, OBJ_THREAD, t->generation);
	if (!k || k->id)
		return;
	k->id = ++st->last[RB_T_THREAD];
	uint64_t id = k->id;
	ROW(st, RB_T_THREAD, I(id), I(1), I(main ? thread_id(st, main) : 0), I(t->pid), I(t->tid));
}

static void export_comm(struct rb_store *st, struct rb_comm *c, struct rb_thread *t)
{
	struct rb_idkey *k = obj_slot(st, c, OBJ_COMM, 0);
	if (!k || k->id)
		return;
	k->id = ++st->last[RB_T_COMM];
	uint64_t id = k->id;
	ROW(st, RB_T_COMM, I(id), T(c->name), I(thread_id(st, t)), I(c->start), I(c->exec));
}

static void export_comm_thread(struct rb_store *st, struct rb_comm *c, struct rb_thread *t)
{
	ROW(st, RB_T_COMM_THREAD, I(++st->last[RB_T_COMM_THREAD]), I(comm_id(st, c)), I(thread_id(st, t)));
}

/* perf's db_export__threads: main thread, its exec comm, the thread, its current comm. */
static struct rb_comm *export_threads(struct rb_store *st, struct rb_thread *t, struct rb_thread *main,
				      struct rb_comm *comm)
{
	if (main) {
		export_thread(st, main, main);
		if (comm && !comm_id(st, comm)) {
			export_comm(st, comm, main);
			export_comm_thread(st, comm, main);
		}
	}
	if (t != main) {
		int first = !thread_id(st, t);
		export_thread(st, t, main);
		if (first && comm)
			export_comm_thread(st, comm, t);
	}
	if (t->comm)
		export_comm(st, t->comm, t);
	return comm;
}

static uint64_t export_dso(struct rb_store *st, struct rb_dso *d)
{
	struct rb_idkey *k = obj_slot(st, d, OBJ_DSO, 0);
	if (!k)
		return 0;
	if (k->id)
		return k->id;
	char bid[41] = "";
	for (int i = 0; i < d->build_id_size; i++)
		sprintf(bid + 2 * i, "%02x", d->build_id[i]);
	k->id = ++st->last[RB_T_DSO];
	uint64_t id = k->id;
	ROW(st, RB_T_DSO, I(id), I(1), T(d->short_name), T(d->long_name), T(bid));
	return id;
}

static uint64_t export_symbol(struct rb_store *st, const struct rb_sym *s, uint64_t dso_id)
{
	struct rb_idkey *k = rb_idmap_intern(&st->syms, (uint64_t)(uintptr_t)s, 0, 0);
	if (!k)
		return fail(st, "out of memory"), 0;
	if (!k->id) {
		k->id = ++st->last[RB_T_SYMBOL];
		ROW(st, RB_T_SYMBOL, I(k->id), I(dso_id), I(s->start), I(s->end), I(s->binding),
		    T(s->name));
	}
	return k->id;
}

/* dso id, symbol id and offset of a resolved address (symbols named by the session: perf_export). */
static const struct rb_sym *export_al(struct rb_store *st, const struct rb_addr_loc *al, uint64_t unknown_at,
				      uint64_t *dso_id, uint64_t *sym_id, uint64_t *off)
{
	*dso_id = *sym_id = *off = 0;
	if (!al->map)
		return NULL;
	const struct rb_sym *s = rb_machine_export_sym(st->m, al, unknown_at);
	/* once a pair has its ids (rows written), they never change: the last ones met answer again */
	uintptr_t h = (uintptr_t)s >> 4;
	h = (h ^ (h >> 9) ^ ((uintptr_t)al->dso >> 4)) & 255;
	if (s && st->seen[h].sym == s && st->seen[h].dso == al->dso) {
		*dso_id = st->seen[h].dso_id;
		*sym_id = st->seen[h].sym_id;
	} else {
		*dso_id = export_dso(st, al->dso);
		if (!s)
			return NULL;
		*sym_id = export_symbol(st, s, *dso_id);
		if (*dso_id && *sym_id) {
			st->seen[h].dso = al->dso;
			st->seen[h].sym = s;
			st->seen[h].dso_id = *dso_id;
			st->seen[h].sym_id = *sym_id;
		}
	}
	*off = al->addr >= s->start ? al->addr - s->start : 0;
	return s;
}

/* A failure the calls builder reports: memory, or a row that failed (already said). */
static uint64_t calls_failed(struct rb_store *st, int rc)
{
	if (rc == -ENOMEM)
		fail(st, "out of memory");
	return 0;
}

static uint64_t call_path(struct rb_store *st, uint64_t parent, uint64_t sym_id, uint64_t ip)
{
	uint64_t id = rb_calls_path(st->calls, parent, sym_id, ip);
	return id ? id : calls_failed(st, rb_calls_error(st->calls));
}

static int store_call_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	struct rb_store *st = ctx;
	ROW(st, RB_T_CALL_PATH, I(id), I(parent), I(sym), I(ip));
	return st->failed ? -1 : 0;
}

static uint64_t export_call_path(struct rb_store *st, const struct rb_sample_ev *ev)
{
	uint64_t cp = rb_calls_root(st->calls);
	if (!cp)
		return calls_failed(st, rb_calls_error(st->calls));
	for (size_t i = 0; i < ev->nr_nodes && !st->failed; i++) {
		uint64_t dso_id, sym_id, off;
		const struct rb_sym *s = export_al(st, &ev->nodes[i].al, ev->nodes[i].ip, &dso_id, &sym_id, &off);
		cp = call_path(st, cp, s ? sym_id : 0, ev->nodes[i].ip);
	}
	return cp;
}

/* ------------------------------------------------------------- sink */

static int sink_begin(void *ctx, struct rb_machine *m)
{
	struct rb_store *st = ctx;
	st->m = m;
	st->nr_evsels = 64;           /* grows with the evsel indexes samples bring */
	st->evsel_db_id = calloc(st->nr_evsels, sizeof(uint64_t));
	if (!st->evsel_db_id)
		return fail(st, "out of memory");
	/* the machine: perf exports the host as pid -1 with an empty root */
	ROW(st, RB_T_MACHINE, I(++st->last[RB_T_MACHINE]), I(-1), T(""));
	if (!st->o.writer)
		writer_start(st);
	return st->failed ? -1 : 0;
}

static void write_aggregates(struct rb_store *st);

/* The session ends (its objects are still alive): every queued row is written. */
static int sink_end(void *ctx)
{
	struct rb_store *st = ctx;
	calls_failed(st, rb_calls_flush(st->calls));
	write_aggregates(st);
	writer_stop(st);
	return st->failed ? -1 : 0;
}

/* A branch into the calls builder, with our ids for its keys; @ref the branch's sample id (0: none). */
static void calls_branch(struct rb_store *st, const struct rb_trace_ev *ev, uint64_t ref, uint64_t thread_id,
			 uint64_t comm_id, uint64_t from_sym, uint64_t to_sym, uint64_t to_off)
{
	struct rb_calls_branch b = { .thread = thread_id, .comm = comm_id,
				     .main_thread = ev->thread == ev->main_thread, .cpu = ev->cpu,
				     .tid = ev->thread->tid, .time = ev->time, .from = ev->from, .to = ev->to,
				     .flags = ev->flags, .insns = ev->insn_count, .cycles = ev->cyc_count,
				     .from_sym = from_sym, .to_sym = to_sym, .to_off = to_off, .ref = ref };
	calls_failed(st, rb_calls_branch(st->calls, &b));
}

static int sink_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_store *st = ctx;
	uint64_t evsel_id = export_evsel(st, &ev->event);
	struct rb_comm *comm = export_threads(st, ev->thread, ev->main_thread, ev->comm);
	uint64_t id = ++st->last[RB_T_SAMPLE];
	uint64_t dso_id, sym_id, off;
	export_al(st, &ev->al, ev->al.addr, &dso_id, &sym_id, &off);
	uint64_t cp = ev->nr_nodes ? export_call_path(st, ev) : 0;
	int64_t cpu = ev->has_cpu ? (int64_t)(int32_t)ev->cpu : -1;
	ROW(st, RB_T_SAMPLE, I(id), I(evsel_id), I(1), I(thread_id(st, ev->thread)), I(comm ? comm_id(st, comm) : 0), I(dso_id),
	    I(sym_id), I(off), I(ev->ip), I(ev->time), I(cpu), I(0), I(0), I(0), I(0), I(ev->period),
	    I(ev->weight), I(ev->transaction), I(ev->data_src), I(0), I(0), I(cp), I(0), I(0), I(0));
	return st->failed ? -1 : 0;
}

/* The calls table: perf's, from the branches (decoder/calls/calls.h has the rules). */

/* Comm @id has calls (if memory runs out, has_calls is set from the calls table instead). */
static void note_call_comm(struct rb_store *st, uint64_t id)
{
	if (id >= st->call_comms_cap && !st->call_comms_lost) {
		size_t cap = id + 1 > 2 * st->call_comms_cap ? id + 1 : 2 * st->call_comms_cap;
		uint8_t *v = id < SIZE_MAX / 2 ? realloc(st->call_comms, cap) : NULL;
		if (!v) {
			st->call_comms_lost = 1;
			return;
		}
		memset(v + st->call_comms_cap, 0, cap - st->call_comms_cap);
		st->call_comms = v;
		st->call_comms_cap = cap;
	}
	if (id < st->call_comms_cap)
		st->call_comms[id] = 1;
}

/* The aggregate of call path @id (made zero on first use); NULL when memory ran out. */
static struct pstat *pstat_of(struct rb_store *st, uint64_t id)
{
	if (id >= st->cap_pstats) {
		size_t n = id + 1 > 2 * st->cap_pstats ? (size_t)id + 1 : 2 * st->cap_pstats;
		struct pstat *v = id < SIZE_MAX / sizeof(*v) / 2 ? realloc(st->pstats, n * sizeof(*v)) : NULL;
		if (!v)
			return fail(st, "out of memory"), NULL;
		st->pstats = v;
		st->cap_pstats = n;
	}
	if (id >= st->nr_pstats) {     /* zeroed as ids come: pages the ids never reach stay unmapped */
		memset(st->pstats + st->nr_pstats, 0, (id + 1 - st->nr_pstats) * sizeof(*st->pstats));
		st->nr_pstats = id + 1;
	}
	return &st->pstats[id];
}

/* A call into call_path_stats: its path's count, its time and that of the calls it made. */
static void aggregate_call(struct rb_store *st, const struct rb_call *c)
{
	struct pstat *p = pstat_of(st, c->path);
	if (!p)
		return;
	p->calls++;
	p->total += c->duration;
	p->children += c->children_time;
	p->branches += c->branches;
	p->insns += c->insns;
	p->cycles += c->cycles;
}

/* A branch into branch_edges: one row per (object, from, to), with its count. */
static void aggregate_edge(struct rb_store *st, const struct edge *e)
{
	struct rb_idkey *k = rb_idmap_get(&st->edge_ids, e->from_dso, e->from, e->to);
	if (!k)
		return (void)fail(st, "out of memory");
	if (k->id) {
		st->edges[k->id - 1].count++;
		return;
	}
	if (st->nr_edges == st->cap_edges) {
		size_t n = st->cap_edges ? 2 * st->cap_edges : 1024;
		struct edge *v = realloc(st->edges, n * sizeof(*v));
		if (!v)
			return (void)fail(st, "out of memory");
		st->edges = v;
		st->cap_edges = n;
	}
	st->edges[st->nr_edges] = *e;
	st->edges[st->nr_edges++].count = 1;
	k->id = st->nr_edges;
}

/* The aggregates' rows, once every call has ended. */
static void write_aggregates(struct rb_store *st)
{
	for (size_t id = 1; id < st->nr_pstats && !st->failed; id++) {
		const struct pstat *p = &st->pstats[id];
		if (p->calls)
			ROW(st, RB_T_PATH_STAT, I(id), I(p->calls), I(p->total),
			    I(p->total >= p->children ? p->total - p->children : 0), I(p->branches), I(p->insns),
			    I(p->cycles));
	}
	for (size_t i = 0; i < st->nr_edges && !st->failed; i++) {
		const struct edge *e = &st->edges[i];
		ROW(st, RB_T_EDGE, I(i + 1), I(e->from_dso), I(e->from_sym), I(e->from_off), I(e->from), I(e->to_dso),
		    I(e->to_sym), I(e->to_off), I(e->to), I(e->type), I(e->count));
	}
}

static int store_call(void *ctx, const struct rb_call *c)
{
	struct rb_store *st = ctx;
	note_call_comm(st, c->comm);
	aggregate_call(st, c);
	if (st->o.call_rows)            /* --calls; call_path_stats has them all either way */
		ROW(st, RB_T_CALL, I(c->id), I(c->thread), I(c->comm), I(c->path), I(c->call_time), I(c->return_time),
		    I(c->branches), I(c->call_ref), I(c->return_ref), I(c->parent_path), I(c->flags), I(c->parent_id),
		    I(c->insns), I(c->cycles));
	return st->failed ? -1 : 0;
}

/* An instruction sample from hardware trace (perf's synthesized "instructions" event; no data source). */
static int sink_insn(struct rb_store *st, const struct rb_trace_ev *ev)
{
	if (!st->insns_evsel) {
		st->insns_evsel = ++st->last[RB_T_EVSEL];
		char name[32];
		snprintf(name, sizeof(name), "instructions%s", ev->mods ? ev->mods : "");
		ROW(st, RB_T_EVSEL, I(st->insns_evsel), T(name));
	}
	struct rb_comm *comm = export_threads(st, ev->thread, ev->main_thread, ev->comm);
	uint64_t dso_id, sym_id, off;
	export_al(st, &ev->from_al, ev->from_al.addr, &dso_id, &sym_id, &off);
	ROW(st, RB_T_SAMPLE, I(++st->last[RB_T_SAMPLE]), I(st->insns_evsel), I(1), I(thread_id(st, ev->thread)),
	    I(comm ? comm_id(st, comm) : 0), I(dso_id), I(sym_id), I(off), I(ev->from), I(ev->time), I(ev->cpu),
	    I(0), I(0), I(0), I(0), I(ev->insn_count), I(0), I(0), I(0),
	    I(0), I(0), I(0), I(ev->insn_count), I(0), I(0));
	return st->failed ? -1 : 0;
}

/*
 * A PTWRITE or power event: a sample of perf's synthesized event of that
 * name (period 1, as perf's), and its row in the event's table with the
 * same id. cbr's mhz and percent are perf's integer formulas (perf's
 * script, run by Python 3, stores them as reals: 2400.5 for 2400).
 */
static int sink_power(struct rb_store *st, const struct rb_trace_ev *ev)
{
	static const char *const names[RB_PWR_COUNT] = { "cbr", "mwait", "pwre", "exstop", "pwrx", "psb" };
	const char *name = ev->kind == RB_EV_PTWRITE ? "ptwrite" : names[ev->power % RB_PWR_COUNT];
	uint64_t evsel_id = export_synth_evsel(st, name);
	struct rb_comm *comm = export_threads(st, ev->thread, ev->main_thread, ev->comm);
	uint64_t dso_id, sym_id, off;
	export_al(st, &ev->from_al, ev->from_al.addr, &dso_id, &sym_id, &off);
	uint64_t id = ++st->last[RB_T_SAMPLE];
	ROW(st, RB_T_SAMPLE, I(id), I(evsel_id), I(1), I(thread_id(st, ev->thread)), I(comm ? comm_id(st, comm) : 0), I(dso_id),
	    I(sym_id), I(off), I(ev->from), I(ev->time), I(ev->cpu), I(0), I(0), I(0), I(0), I(1), I(0), I(0), I(0),
	    I(0), I(0), I(0), I(0), I(0), I(0));
	const uint64_t *v = ev->payload;
	if (ev->kind == RB_EV_PTWRITE) {
		ROW(st, RB_T_PTWRITE, I(id), I(v[0]), I(v[1]));
		return st->failed ? -1 : 0;
	}
	switch (ev->power) {
	case RB_PWR_CBR:
		ROW(st, RB_T_CBR, I(id), I(v[0]), I((v[1] + 500) / 1000), I(v[2] ? (5 + 1000 * v[0] / v[2]) / 10 : 0));
		break;
	case RB_PWR_MWAIT:
		ROW(st, RB_T_MWAIT, I(id), I(v[0]), I(v[1]));
		break;
	case RB_PWR_PWRE:
		ROW(st, RB_T_PWRE, I(id), I(v[0]), I(v[1]), I(v[2]));
		break;
	case RB_PWR_EXSTOP:
		ROW(st, RB_T_EXSTOP, I(id), I(v[0]));
		break;
	case RB_PWR_PSB:            /* a sample only, as perf's */
		break;
	default:
		ROW(st, RB_T_PWRX, I(id), I(v[0]), I(v[1]), I(v[2]));
		break;
	}
	return st->failed ? -1 : 0;
}

/*
 * A branch from hardware trace: a sample of perf's synthesized "branches"
 * event. Like perf's synthesized samples it has no data source (0, not
 * PERF_MEM_DATA_SRC_NONE) and keeps the branch's flags whole in "flags".
 */
static int sink_branch(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_store *st = ctx;
	if (ev->kind == RB_EV_INSTRUCTION)
		return sink_insn(st, ev);
	if (ev->kind == RB_EV_PTWRITE || ev->kind == RB_EV_POWER)
		return sink_power(st, ev);
	/* the "branches" event is listed even without its rows: ids of later events stay as with them */
	if (!st->branches_evsel) {
		st->branches_evsel = ++st->last[RB_T_EVSEL];
		char name[32];
		snprintf(name, sizeof(name), "branches%s", ev->mods ? ev->mods : "");
		ROW(st, RB_T_EVSEL, I(st->branches_evsel), T(name));
	}
	/* the thread and comm rows (perf's db_export__threads), unless the last branch's were these */
	if (ev->thread != st->lt.thread || ev->thread->generation != st->lt.generation || ev->main_thread != st->lt.main ||
	    ev->comm != st->lt.comm || ev->thread->comm != st->lt.thread_comm) {
		struct rb_comm *comm = export_threads(st, ev->thread, ev->main_thread, ev->comm);
		st->lt.thread = ev->thread;
		st->lt.generation = ev->thread->generation;
		st->lt.main = ev->main_thread;
		st->lt.comm = ev->comm;
		st->lt.thread_comm = ev->thread->comm;
		st->lt.thread_id = thread_id(st, ev->thread);
		st->lt.comm_id = comm ? comm_id(st, comm) : 0;
	}
	uint64_t dso_id, sym_id, off, to_dso_id, to_sym_id, to_off;
	export_al(st, &ev->from_al, ev->from_al.addr, &dso_id, &sym_id, &off);
	export_al(st, &ev->to_al, ev->to_al.addr, &to_dso_id, &to_sym_id, &to_off);
	/*
	 * Every branch takes its sample id, stored or not (--itrace=b stores it):
	 * the ids of the rows after it (other samples, instruction, PTWRITE and
	 * power events) are then the same in every mode, and a branch decoded
	 * again later (the lazy tables) can be given the id --itrace=b gives it.
	 * Without its row, no calls row names it (call_id, return_id 0).
	 */
	uint64_t id = ++st->last[RB_T_SAMPLE];
	if (ev->from && ev->to) {
		struct edge e = { dso_id, sym_id, off, ev->from, to_dso_id, to_sym_id, to_off, ev->to,
				  ev->flags & ~(uint32_t)RB_IP_FLAG_IN_TX, 0 };
		aggregate_edge(st, &e);
	}
	if (ev->flags)          /* a branch sample without branch flags (CoreSight's) makes no call */
		calls_branch(st, ev, st->o.branch_rows ? id : 0, st->lt.thread_id, st->lt.comm_id, sym_id, to_sym_id,
			     to_off);
	if (st->o.branch_rows)
		ROW(st, RB_T_SAMPLE, I(id), I(st->branches_evsel), I(1), I(st->lt.thread_id),
		    I(st->lt.comm_id), I(dso_id), I(sym_id), I(off), I(ev->from), I(ev->time), I(ev->cpu),
		    I(to_dso_id), I(to_sym_id), I(to_off), I(ev->to), I(1), I(0), I(0), I(0),
		    I(ev->flags & ~(uint32_t)RB_IP_FLAG_IN_TX), I(!!(ev->flags & RB_IP_FLAG_IN_TX)), I(0),
		    I(ev->insn_count), I(ev->cyc_count), I(ev->flags));
	return st->failed ? -1 : 0;
}

static int sink_switch(void *ctx, const struct rb_switch_ev *ev)
{
	struct rb_store *st = ctx;
	uint64_t a_id = 0, b_id = 0;
	struct rb_comm *ca = NULL, *cb = NULL;
	int idle_a = 0, idle_b = 0;
	/* perf exports only threads whose comm is known */
	if (ev->a && ev->a->comm_set) {
		idle_a = !ev->a->pid && !ev->a->tid;
		ca = export_threads(st, ev->a, rb_machine_main_thread(st->m, ev->a),
				    rb_machine_sample_comm(st->m, ev->a));
		a_id = thread_id(st, ev->a);
	}
	if (ev->b && ev->b->comm_set) {
		idle_b = !ev->b->pid && !ev->b->tid;
		cb = export_threads(st, ev->b, rb_machine_main_thread(st->m, ev->b),
				    rb_machine_sample_comm(st->m, ev->b));
		b_id = thread_id(st, ev->b);
	}
	/* a thread that exited, switched out for good: its calls can end (rb_calls_thread_gone) */
	const struct rb_thread *gone = ev->out ? ev->a : NULL;      /* OUT records: only they say preempted */
	uint64_t gone_id = gone && gone->dead && !ev->preempt ? thread_id(st, gone) : 0;
	if (gone_id && rb_calls_thread_gone(st->calls, gone_id, ev->cpu))
		return calls_failed(st, rb_calls_error(st->calls)), -1;
	if ((!a_id || idle_a) && (!b_id || idle_b))
		return st->failed ? -1 : 0;
	int flags = ev->out | (ev->preempt << 1);
	uint64_t out_id = ev->out ? a_id : b_id, in_id = ev->out ? b_id : a_id;
	struct rb_comm *cout = ev->out ? ca : cb, *cin = ev->out ? cb : ca;
	ROW(st, RB_T_SWITCH, I(++st->last[RB_T_SWITCH]), I(1), I(ev->time), I(ev->cpu), I(out_id),
	    I(cout ? comm_id(st, cout) : 0), I(in_id), I(cin ? comm_id(st, cin) : 0), I(flags));
	return st->failed ? -1 : 0;
}

static int sink_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_store *st = ctx;
	/* the decoder restarted: the next branch on the queue ends its thread's calls */
	if (rb_calls_gap_restarts(g->reason) && rb_calls_restart(st->calls, g->cpu, g->tid))
		return calls_failed(st, rb_calls_error(st->calls)), -1;
	ROW(st, RB_T_GAP, I(++st->last[RB_T_GAP]), I(g->time_start), I(g->time_end), I(g->cpu), I(g->pid),
	    I(g->tid), T(g->source), T(g->reason), I(g->bytes_lost), I(g->records_lost),
	    I(g->file_offset), T(g->detail ? g->detail : ""));
	return st->failed ? -1 : 0;
}

static int sink_sync_point(void *ctx, const struct rb_sync_ev *e)
{
	struct rb_store *st = ctx;
	ROW(st, RB_T_SYNC, I(++st->last[RB_T_SYNC]), T(e->source), I(e->queue), I(e->cpu), I(e->tid), I(e->time),
	    I(e->aux_pos), I(e->file_offset), I(e->ip));
	return st->failed ? -1 : 0;
}

/* Where the extension's windows start decoding: with the samples id the next event takes from there (sample_seq). */
static int sink_seek_point(void *ctx, const struct rb_seek_ev *e)
{
	struct rb_store *st = ctx;
	ROW(st, RB_T_SEEK, I(++st->last[RB_T_SEEK]), T(e->source), I(e->queue), I(e->cpu), I(e->time), I(e->tsc),
	    I(e->pos), I(e->aux_pos), I(e->start_off), I(e->start_ord), I(e->start_from), I(e->start_to),
	    I(e->start_flags), I(st->last[RB_T_SAMPLE]));
	return st->failed ? -1 : 0;
}

static int sink_aux_buffer(void *ctx, const struct rb_aux_ev *a)
{
	struct rb_store *st = ctx;
	ROW(st, RB_T_AUX, I(++st->last[RB_T_AUX]), I(a->queue), I(a->cpu), I(a->tid), I(a->aux_offset),
	    I(a->size), I(a->file_offset), I(a->snapshot_nr), I(a->reference));
	return st->failed ? -1 : 0;
}

/* IMC records from perf.data carry no timebase or counter snapshots (the kernel drops them): 0. */
static int sink_imc_record(void *ctx, const struct rb_imc_rec_ev *r)
{
	struct rb_store *st = ctx;
	uint64_t evsel_id = export_evsel(st, &r->event);
	ROW(st, RB_T_IMC, I(++st->last[RB_T_IMC]), I(r->time), I(r->estimated), I(r->cpu), I(r->pid), I(r->tid),
	    I(r->ip), I(r->privilege), I(r->period), I(0), I(0), I(0), I(0), I(0), I(r->flush_time), I(evsel_id));
	return st->failed ? -1 : 0;
}

static int sink_imc_counter(void *ctx, const struct rb_imc_counter_ev *c)
{
	struct rb_store *st = ctx;
	uint64_t evsel_id = export_evsel(st, &c->event);
	ROW(st, RB_T_IMC_COUNTER, I(++st->last[RB_T_IMC_COUNTER]), I(c->time), I(c->cpu), I(c->tid), I(evsel_id),
	    T(c->pmu ? c->pmu : ""), T(c->source), I(c->value), I(c->enabled), I(c->running));
	return st->failed ? -1 : 0;
}

static int ftrace_event(void *ctx, const struct rb_ftrace_ev *ev)
{
	struct rb_store *st = ctx;
	ROW(st, RB_T_FTRACE, I(++st->last[RB_T_FTRACE]), I((int64_t)ev->time), I(ev->cpu), I(ev->pid), T(ev->comm),
	    T(ev->system), T(ev->name), I(ev->flags), I(ev->preempt_count), T(ev->fields), T(ev->info),
	    I((int64_t)ev->file_offset));
	return st->failed ? -1 : 0;
}

/* ------------------------------------------------------------- life */

static int exec_sql(struct rb_store *st, const char *sql, const char *what)
{
	char *e = NULL;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &e) != SQLITE_OK) {
		char hint[160];
		if (!st->failed) {
			st->failed_nomem = sqlite3_errcode(st->db) == SQLITE_NOMEM;
			snprintf(st->err, sizeof(st->err), "%s: %s: %s%s", st->tmp_path, what, e ? e : "?",
				 io_hint(st, hint, sizeof(hint)));
		}
		st->failed = 1;
		sqlite3_free(e);
		return -1;
	}
	return 0;
}

static int add_unknown_rows(struct rb_store *st)
{
	/* perf: "id == 0 means unknown. It is easier to create records for them than replace the zeroes with NULLs" */
	ROW(st, RB_T_EVSEL, I(0), T("unknown"));
	ROW(st, RB_T_MACHINE, I(0), I(0), T("unknown"));
	ROW(st, RB_T_THREAD, I(0), I(0), I(0), I(-1), I(-1));
	ROW(st, RB_T_COMM, I(0), T("unknown"), I(0), I(0), I(0));
	ROW(st, RB_T_DSO, I(0), I(0), T("unknown"), T("unknown"), T(""));
	ROW(st, RB_T_SYMBOL, I(0), I(0), I(0), I(0), I(0), T("unknown"));
	ROW(st, RB_T_SAMPLE, I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0),
	    I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0));
	ROW(st, RB_T_CALL_PATH, I(0), I(0), I(0), I(0));
	if (st->o.writer)
		ROW(st, RB_T_CALL, I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0), I(0));
	else
		exec_sql(st, "INSERT INTO calls VALUES (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)", "calls row 0");
	note_call_comm(st, 0);   /* that row's comm: "unknown" has calls as soon as any call is written, as in perf's */
	for (size_t i = 0; i < sizeof(BRANCH_TYPES) / sizeof(BRANCH_TYPES[0]); i++)
		ROW(st, RB_T_BRANCH_TYPE, I(BRANCH_TYPES[i].type), T(BRANCH_TYPES[i].name));
	for (size_t i = 0; i < sizeof(BRANCH_TYPES) / sizeof(BRANCH_TYPES[0]); i++) {
		unsigned t = BRANCH_TYPES[i].type;
		char name[96];
		if (t == 1 || (t & (256 | 512)))
			continue;
		snprintf(name, sizeof(name), "trace begin / %s", BRANCH_TYPES[i].name);
		ROW(st, RB_T_BRANCH_TYPE, I((t | 256)), T(name));
		snprintf(name, sizeof(name), "%s / trace end", BRANCH_TYPES[i].name);
		ROW(st, RB_T_BRANCH_TYPE, I((t | 512)), T(name));
	}
	/* the unknown rows are not data: counts start here */
	memset(st->rows, 0, sizeof(st->rows));
	return st->failed ? -1 : 0;
}

static void set_sink(struct rb_store *st)
{
	st->sink = (struct rb_sink){ .ctx = st, .begin = sink_begin, .sample = sink_sample, .trace = sink_branch,
				     .context_switch = sink_switch, .gap = sink_gap, .aux_buffer = sink_aux_buffer,
				     .imc_record = sink_imc_record, .imc_counter = sink_imc_counter,
				     .ftrace_event = ftrace_event, .sync_point = sink_sync_point, .seek_point = sink_seek_point,
				     .end = sink_end };
}

/* The same rows into an external writer (o->writer, which the store then owns): no file, no SQLite. */
static int open_external(struct rb_store **out, const struct rb_store_opts *o, char *msg, size_t msglen)
{
	struct rb_store *st = calloc(1, sizeof(*st));
	if (!st) {
		o->writer->abort(o->writer->ctx);
		snprintf(msg, msglen, "out of memory");
		return PD_ERR_NOMEM;
	}
	st->o = *o;
	struct rb_calls_out co = { .ctx = st, .path = store_call_path, .call = store_call };
	st->calls = rb_calls_new(&co);
	if (!st->calls) {
		rb_store_abort(st);
		snprintf(msg, msglen, "out of memory");
		return PD_ERR_NOMEM;
	}
	if (add_unknown_rows(st)) {
		snprintf(msg, msglen, "%s", st->err);
		rb_store_abort(st);
		return -1;
	}
	set_sink(st);
	*out = st;
	return 0;
}

int rb_store_open(struct rb_store **out, const struct rb_store_opts *o, char *msg, size_t msglen)
{
	*out = NULL;
	if (o->writer)
		return open_external(out, o, msg, msglen);
	struct stat sb;
	if (!o->force && stat(o->path, &sb) == 0) {
		snprintf(msg, msglen, "%s already exists (use --force to replace it)", o->path);
		return -1;
	}
	struct rb_store *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(msg, msglen, "out of memory");
		return PD_ERR_NOMEM;
	}
	st->o = *o;
	st->final_path = strdup(o->path);
	size_t n = strlen(o->path) + 32;
	st->tmp_path = malloc(n);
	struct rb_calls_out co = { .ctx = st, .path = store_call_path, .call = store_call };
	st->calls = rb_calls_new(&co);
	if (!st->final_path || !st->tmp_path || !st->calls) {
		rb_store_abort(st);
		snprintf(msg, msglen, "out of memory");
		return PD_ERR_NOMEM;
	}
	snprintf(st->tmp_path, n, "%s.tmp-%ld", o->path, (long)getpid());
	unlink(st->tmp_path);
	/* create it ourselves first: SQLite's "unable to open database file" does not say why */
	int fd = open(st->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(msg, msglen, "%s: cannot create the database: %s", st->tmp_path, strerror(errno));
		rb_store_abort(st);
		return -1;
	}
	close(fd);
	/*
	 * SQLite's memory statistics take a global mutex in every allocation (a
	 * few per row inserted), and nothing reads them. Only possible before
	 * the process's first SQLite call; later the call fails, changing nothing.
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(st->tmp_path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(msg, msglen, "%s: cannot create the database: %s", st->tmp_path,
			 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		int nomem = !st->db || sqlite3_errcode(st->db) == SQLITE_NOMEM;
		rb_store_abort(st);
		return nomem ? PD_ERR_NOMEM : -1;
	}
	exec_sql(st, "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
		     "PRAGMA cache_size = -4096; BEGIN", "pragmas");
	exec_sql(st, SCHEMA, "schema");
	for (int i = 0; i < RB_T_COUNT && !st->failed; i++) {
		if (sqlite3_prepare_v3(st->db, STMT_SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &st->st[i], NULL) != SQLITE_OK)
			fail(st, STMT_SQL[i]);
		if (rowid_first(st->db, STMT_SQL[i]))
			st->rowid_first |= 1u << i;
		char *m = multi_sql(STMT_SQL[i]);     /* not for INSERT OR REPLACE: rows one by one */
		if (m && sqlite3_prepare_v3(st->db, m, -1, SQLITE_PREPARE_PERSISTENT, &st->multi[i], NULL) != SQLITE_OK)
			st->multi[i] = NULL;
		free(m);
	}
	if (!st->failed)
		add_unknown_rows(st);
	if (st->failed) {
		snprintf(msg, msglen, "%s", st->err);
		int nomem = st->failed_nomem;
		rb_store_abort(st);
		return nomem ? PD_ERR_NOMEM : -1;
	}
	set_sink(st);
	*out = st;
	return 0;
}

const struct rb_sink *rb_store_sink(struct rb_store *st) { return &st->sink; }

const struct rb_ftrace_sink *rb_store_ftrace_sink(struct rb_store *st)
{
	st->ftrace_sink = (struct rb_ftrace_sink){ .ctx = st, .event = ftrace_event, .gap = sink_gap };
	return &st->ftrace_sink;
}

static void stat_row(struct rb_store *st, const char *name, uint64_t v)
{
	ROW(st, RB_T_STAT, T(name), I(v));
}

void rb_store_note_text(struct rb_store *st, const char *name, const char *value)
{
	ROW(st, RB_T_STAT, T(name), T(value));
}

void rb_store_note(struct rb_store *st, const char *name, uint64_t value)
{
	if (!strcmp(name, "partial"))
		st->partial |= value != 0;   /* written once, by rb_store_finish */
	else
		stat_row(st, name, value);
}

/* perf drops the power / ptwrite / switch tables when nothing went in them. */
/* Trace made calls, and none was stored (drop_empty). */
static int calls_dropped(const struct rb_store *st)
{
	return !st->o.call_rows && (st->rows[RB_T_PATH_STAT] || (st->o.quick && st->rows[RB_T_SYNC]));
}

static void drop_empty(struct rb_store *st)
{
	/*
	 * Trace that made calls not stored (no --calls): no calls table, rather
	 * than an empty one that would answer "none". With the rbtrace
	 * extension loaded the name is its lazy calls table, and perf's views
	 * over it (calls_view) read that; without it they say the table is missing.
	 */
	if (calls_dropped(st))
		exec_sql(st, "DROP TABLE calls", "drop");
	if (!st->rows[RB_T_SWITCH])
		exec_sql(st, "DROP VIEW context_switches_view; DROP TABLE context_switches", "drop");
	if (!st->rows[RB_T_FTRACE])
		exec_sql(st, "DROP VIEW timeline; DROP VIEW ftrace_fields; DROP TABLE ftrace_events", "drop");
	if (!st->rows[RB_T_PTWRITE])
		exec_sql(st, "DROP VIEW ptwrite_view; DROP TABLE ptwrite", "drop");
	if (!st->rows[RB_T_PATH_STAT])
		exec_sql(st, "DROP VIEW function_stats; DROP TABLE call_path_stats", "drop");
	if (!st->rows[RB_T_EDGE])
		exec_sql(st, "DROP VIEW branch_edges_view; DROP TABLE branch_edges", "drop");
	if (!st->rows[RB_T_SYNC])
		exec_sql(st, "DROP TABLE trace_index", "drop");
	if (!st->rows[RB_T_SEEK])
		exec_sql(st, "DROP TABLE trace_seek", "drop");
	if (st->rows[RB_T_MWAIT] || st->rows[RB_T_PWRE] || st->rows[RB_T_EXSTOP] || st->rows[RB_T_PWRX])
		return;
	exec_sql(st, "DROP VIEW power_events_view; DROP VIEW mwait_view; DROP TABLE mwait;"
		     "DROP VIEW pwre_view; DROP TABLE pwre; DROP VIEW exstop_view; DROP TABLE exstop;"
		     "DROP VIEW pwrx_view; DROP TABLE pwrx", "drop");
	if (!st->rows[RB_T_CBR])
		exec_sql(st, "DROP VIEW cbr_view; DROP TABLE cbr", "drop");
}

/* comms.has_calls, as perf's export sets it: 1 where the comm has calls (from what cpop noted, not a scan of calls). */
static void set_has_calls(struct rb_store *st)
{
	if (st->call_comms_lost) {
		exec_sql(st, COMMS_HAS_CALLS_ADD COMMS_HAS_CALLS_SET, "comms.has_calls");
		return;
	}
	exec_sql(st, COMMS_HAS_CALLS_ADD, "comms.has_calls");
	sqlite3_stmt *u;
	if (sqlite3_prepare_v2(st->db, "UPDATE comms SET has_calls = 1 WHERE id = ?", -1, &u, NULL) != SQLITE_OK) {
		fail(st, "comms.has_calls");
		return;
	}
	for (size_t id = 0; id < st->call_comms_cap && !st->failed; id++)
		if (st->call_comms[id]) {
			sqlite3_bind_int64(u, 1, (int64_t)id);
			if (sqlite3_step(u) != SQLITE_DONE)
				fail(st, "comms.has_calls");
			sqlite3_reset(u);
		}
	sqlite3_finalize(u);
}

/*
 * A hardware trace's database without a row per branch or per call is
 * mostly a page or two per table, and 64 KiB pages (for fast inserts) make
 * even an empty one 2 MB: a small one (up to 16 MiB; rewriting takes a few
 * ms per MB) is rewritten with 4 KiB pages. The rows stay as they are.
 */
static void compact(struct rb_store *st)
{
	sqlite3_stmt *q;
	int64_t pages = 0;
	if (st->failed || !st->branches_evsel || st->o.branch_rows || st->o.call_rows)
		return;
	if (sqlite3_prepare_v2(st->db, "PRAGMA page_count", -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		pages = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (pages && pages <= 256)
		exec_sql(st, "PRAGMA page_size = 4096; VACUUM", "compact");
}

/* The external writer's commit; frees @st. */
static int finish_external(struct rb_store *st, char *msg, size_t msglen)
{
	if (!st->failed && st->o.writer->finish(st->o.writer->ctx, st->rows, calls_dropped(st),
						       st->call_comms_lost ? NULL : st->call_comms, st->call_comms_cap))
		writer_failed(st);
	int rc = st->failed ? -1 : 0;
	if (rc)
		snprintf(msg, msglen, "%s", st->err);
	rb_store_abort(st);
	return rc;
}

int rb_store_finish(struct rb_store *st, const struct rb_session_stats *stats, char *msg, size_t msglen)
{
	stat_row(st, "schema_version", RB_STORE_SCHEMA_VERSION);
	stat_row(st, "records", stats->records);
	stat_row(st, "samples", stats->samples);
	stat_row(st, "samples_out_of_window", stats->samples_out_of_window);
	stat_row(st, "branch_samples_from_trace", stats->branches);
	stat_row(st, "branch_rows", (uint64_t)!!st->o.branch_rows);
	stat_row(st, "call_rows", (uint64_t)!!st->o.call_rows);
	stat_row(st, "malformed_records", stats->malformed);
	stat_row(st, "records_below_flush", stats->late);
	if (stats->unwound_samples) {
		stat_row(st, "unwound_samples", stats->unwound_samples);
		stat_row(st, "unwind_stopped", stats->unwind_stopped);
	}
	stat_row(st, "trace_bytes", stats->trace_bytes);
	stat_row(st, "trace_bytes_no_binary", stats->trace_bytes_no_binary);
	stat_row(st, "binaries_not_found", stats->binaries_not_found);
	stat_row(st, "partial", rb_session_partial(stats) || st->partial);
	if (stats->binaries_not_found) {
		rb_store_note_text(st, "binaries_missing", stats->binaries_missing);
		/* the share of the trace decoded, as the warning on stderr says it */
		char pct[32];
		uint64_t tb = stats->trace_bytes, nb = stats->trace_bytes_no_binary < tb ? stats->trace_bytes_no_binary : tb;
		snprintf(pct, sizeof(pct), "%.1f%%", tb ? 100.0 * (double)(tb - nb) / (double)tb : 100.0);
		rb_store_note_text(st, "trace_decoded", pct);
	}
	if (stats->stop.code)
		rb_store_note_text(st, "stopped", stats->stop.msg);
	if (st->o.source)
		rb_store_note_text(st, "source", st->o.source);
	if (st->o.writer)
		return finish_external(st, msg, msglen);
	drop_empty(st);
	if (st->rows[RB_T_CALL])
		set_has_calls(st);
	char pragma[64];
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", RB_STORE_SCHEMA_VERSION);
	exec_sql(st, pragma, "user_version");
	exec_sql(st, "COMMIT", "commit");
	exec_sql(st, INDEXES, "indexes");
	if (!calls_dropped(st))
		exec_sql(st, CALLS_INDEX, "indexes");
	exec_sql(st, INDEXES2, "indexes");
	if (st->rows[RB_T_SWITCH])
		exec_sql(st, SWITCH_INDEX, "indexes");
	if (st->rows[RB_T_FTRACE])
		exec_sql(st, FTRACE_INDEX, "indexes");
	if (st->rows[RB_T_SYNC])
		exec_sql(st, SYNC_INDEX, "indexes");
	if (st->rows[RB_T_SEEK])
		exec_sql(st, SEEK_INDEX, "indexes");
	for (int i = 0; i < RB_T_COUNT; i++) {
		sqlite3_finalize(st->st[i]);
		sqlite3_finalize(st->multi[i]);
		st->st[i] = st->multi[i] = NULL;
	}
	compact(st);
	if (sqlite3_close(st->db) != SQLITE_OK && !st->failed)
		fail(st, "close");
	st->db = NULL;
	if (!st->failed && rename(st->tmp_path, st->final_path) < 0) {
		snprintf(st->err, sizeof(st->err), "%s: cannot rename to %s: %s", st->tmp_path, st->final_path,
			 strerror(errno));
		st->failed = 1;
	}
	int rc = st->failed ? -1 : 0;
	if (rc)
		snprintf(msg, msglen, "%s", st->err);
	rb_store_abort(st);   /* frees; the temporary name no longer exists after a rename */
	return rc;
}

void rb_store_abort(struct rb_store *st)
{
	if (!st)
		return;
	writer_stop(st);
	for (int i = 0; i < RB_T_COUNT; i++) {
		sqlite3_finalize(st->st[i]);
		sqlite3_finalize(st->multi[i]);
	}
	if (st->db)
		sqlite3_close(st->db);
	if (st->tmp_path)
		unlink(st->tmp_path);
	if (st->o.writer)
		st->o.writer->abort(st->o.writer->ctx);   /* after a finish, frees what is left */
	rb_idmap_free(&st->syms);
	rb_idmap_free(&st->objs);
	rb_idmap_free(&st->edge_ids);
	free(st->pstats);
	free(st->edges);
	rb_calls_free(st->calls);
	free(st->call_comms);
	free(st->evsel_db_id);
	free(st->final_path);
	free(st->tmp_path);
	free(st);
}

const char *rb_store_error(struct rb_store *st)
{
	writer_stop(st);    /* the writer thread may be the one that failed: let it finish the message */
	return st->failed ? st->err : NULL;
}

uint64_t rb_store_rows(const struct rb_store *st, const char *table)
{
	static const struct { const char *name; enum rb_table id; } t[] = {
		{ "samples", RB_T_SAMPLE }, { "threads", RB_T_THREAD }, { "comms", RB_T_COMM }, { "dsos", RB_T_DSO },
		{ "symbols", RB_T_SYMBOL }, { "call_paths", RB_T_CALL_PATH }, { "context_switches", RB_T_SWITCH },
		{ "gaps", RB_T_GAP }, { "aux_buffers", RB_T_AUX }, { "imc_records", RB_T_IMC },
		{ "imc_counters", RB_T_IMC_COUNTER }, { "ftrace_events", RB_T_FTRACE },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].name, table))
			return st->rows[t[i].id];
	return 0;
}
