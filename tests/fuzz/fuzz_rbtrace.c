/*
 * fuzz_rbtrace.c - libFuzzer target for the rbtrace extension's entry
 * points: the constraints SQLite hands its lazy tables (xBestIndex,
 * xFilter: any column, operator and value type) and the database rows it
 * reads to find its recording and to start decoding (decode_stats,
 * trace_seek, trace_index, the objects tables), in-process with the
 * extension linked in (registered as an auto extension, as .load would).
 *
 * The templates are databases rbdecode made of recordings (run.sh makes
 * them: the loops-full and threads-2cpu fixtures, small and quick to
 * decode; ptgen's 1 MB one-queue trace exported in 4 KiB segments, so that
 * trace_seek has seek points; a 4-CPU thread-per-run one), named by
 * FUZZ_RBTRACE_DBS (colon-separated, at most MAX_TEMPLATES); their
 * recordings stay where they were exported. Each input is a small program over one of them, copied
 * into memory (sqlite3_deserialize): first byte picks the template and
 * the environment switches (RBTRACE_NO_SPLIT, RBTRACE_NO_SEEK); then
 * row changes (UPDATE or DELETE of a row of a table the extension reads,
 * with an integer, real, text, blob or NULL value), then one query over
 * branches or calls (the select list: count, every column, a lean column
 * set, or an aggregate; up to four constraints on any column with any
 * operator and a bound value; ORDER BY id; LIMIT). Every row is stepped
 * through, every value converted to text, until the query ends or is
 * interrupted (see PROGRESS_STEPS).
 *
 * A finding: a crash, a leak, undefined behaviour (ASan, UBSan), or a
 * query that fails without an error message.
 */
#include "config.h"
#include <sqlite3.h>
#include "fuzz.h"

int sqlite3_rbtrace_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

#define MAX_TEMPLATES 4
/*
 * What a query may do before it is interrupted (sqlite3_progress_handler,
 * every 1000 virtual machine steps): a few thousand rows, so that an input
 * takes milliseconds, not the seconds a whole trace takes under ASan, and
 * so that stopping a decoding in the middle is fuzzed too.
 */
#define PROGRESS_STEPS 1000
#define PROGRESS_CALLS 64

static int progress(void *ctx)
{
	return ++*(int *)ctx > PROGRESS_CALLS;
}

static struct { uint8_t *data; size_t len; } tmpl[MAX_TEMPLATES];
static size_t ntmpl;

/* The input, read front to back; past its end every read is 0. */
struct in { const uint8_t *p; size_t n; };

static uint64_t take(struct in *in, size_t bytes)
{
	uint64_t v = 0;
	for (size_t i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

static void load_templates(void)
{
	const char *list = getenv("FUZZ_RBTRACE_DBS");
	if (!list || !*list) {
		fprintf(stderr, "fuzz_rbtrace: FUZZ_RBTRACE_DBS names no database (run it through tests/fuzz/run.sh)\n");
		abort();
	}
	char *copy = strdup(list), *save = NULL;
	for (char *path = strtok_r(copy, ":", &save); path && ntmpl < MAX_TEMPLATES; path = strtok_r(NULL, ":", &save)) {
		FILE *f = fopen(path, "rb");
		if (!f || fseek(f, 0, SEEK_END) || ftell(f) <= 0) {
			fprintf(stderr, "fuzz_rbtrace: cannot read %s\n", path);
			abort();
		}
		size_t len = (size_t)ftell(f);
		rewind(f);
		uint8_t *d = malloc(len);
		if (!d || fread(d, 1, len, f) != len)
			abort();
		fclose(f);
		tmpl[ntmpl].data = d;
		tmpl[ntmpl++].len = len;
	}
	free(copy);
	if (!ntmpl)
		abort();
	sqlite3_auto_extension((void (*)(void))sqlite3_rbtrace_init);
}

/* A value from the input: integer (small, near a boundary, or any), real, text, blob or NULL. */
static void bind_value(sqlite3_stmt *s, int i, struct in *in)
{
	static const int64_t edges[] = { 0, 1, -1, INT64_MAX, INT64_MIN, 4242, 1000000000000LL, UINT32_MAX };
	char text[16];
	switch (take(in, 1) % 8) {
	case 0:
		sqlite3_bind_int64(s, i, (int64_t)take(in, 2));
		break;
	case 1:
		sqlite3_bind_int64(s, i, edges[take(in, 1) % (sizeof(edges) / sizeof(edges[0]))]);
		break;
	case 2:
	case 3:
		sqlite3_bind_int64(s, i, (int64_t)take(in, 8));
		break;
	case 4: {
		uint64_t b = take(in, 8);
		double d;
		memcpy(&d, &b, sizeof(d));
		sqlite3_bind_double(s, i, d);
		break;
	}
	case 5: {
		size_t n = take(in, 1) % sizeof(text);
		for (size_t k = 0; k < n; k++)
			text[k] = (char)(take(in, 1) % 94 + 32);
		sqlite3_bind_text(s, i, text, (int)n, SQLITE_TRANSIENT);
		break;
	}
	case 6: {
		size_t n = take(in, 1) % sizeof(text);
		for (size_t k = 0; k < n; k++)
			text[k] = (char)take(in, 1);
		sqlite3_bind_blob(s, i, text, (int)n, SQLITE_TRANSIENT);
		break;
	}
	default:
		sqlite3_bind_null(s, i);
		break;
	}
}

/* The tables the extension reads: a change makes one of their rows another value, or deletes it. */
static const char *const TABLES[] = { "trace_seek", "trace_index", "decode_stats", "threads", "comms",
				      "comm_threads", "dsos", "symbols", "selected_events", "machines", "gaps" };

static void change_row(sqlite3 *db, struct in *in)
{
	const char *t = TABLES[take(in, 1) % (sizeof(TABLES) / sizeof(TABLES[0]))];
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')", t);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return;
	char cols[16][64];
	int n = 0;
	while (n < 16 && sqlite3_step(s) == SQLITE_ROW)
		snprintf(cols[n++], sizeof(cols[0]), "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	if (!n)
		return;
	uint64_t row = take(in, 2);
	int del = take(in, 1) % 8 == 0;
	if (del)
		snprintf(sql, sizeof(sql), "DELETE FROM \"%s\" WHERE rowid = (SELECT rowid FROM \"%s\" LIMIT 1 OFFSET ?1)", t, t);
	else
		snprintf(sql, sizeof(sql), "UPDATE \"%s\" SET \"%s\" = ?2 WHERE rowid = (SELECT rowid FROM \"%s\" LIMIT 1 OFFSET ?1)",
			 t, cols[take(in, 1) % (uint64_t)n], t);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, (int64_t)row);
	if (!del)
		bind_value(s, 2, in);
	sqlite3_step(s);
	sqlite3_finalize(s);
}

static const char *const BRANCH_COLS[] = { "id", "evsel_id", "machine_id", "thread_id", "comm_id", "dso_id", "symbol_id",
					   "sym_offset", "ip", "time", "cpu", "to_dso_id", "to_symbol_id", "to_sym_offset",
					   "to_ip", "period", "weight", "transaction_", "data_src", "branch_type", "in_tx",
					   "call_path_id", "insn_count", "cyc_count", "flags", "pid", "tid", "rowid" };
static const char *const CALL_COLS[] = { "id", "thread_id", "comm_id", "call_path_id", "call_time", "return_time",
					 "branch_count", "call_id", "return_id", "parent_call_path_id", "flags", "parent_id",
					 "insn_count", "cyc_count", "pid", "tid", "rowid" };
static const char *const OPS[] = { "=", "<", "<=", ">", ">=", "!=", "IS", "IS NOT", "BETWEEN", "IN", "LIKE", "IS NULL" };
static const char *const SELECTS[] = { "count(*)", "*", "id, time, cpu, ip, to_ip", "sum(time), min(id), max(id)", "DISTINCT cpu" };

/* One query from the input over branches or calls: 0, or 1 when it failed without saying why. */
static int query(sqlite3 *db, struct in *in)
{
	int calls = take(in, 1) % 4 == 0;
	const char *const *cols = calls ? CALL_COLS : BRANCH_COLS;
	size_t ncols = calls ? sizeof(CALL_COLS) / sizeof(CALL_COLS[0]) : sizeof(BRANCH_COLS) / sizeof(BRANCH_COLS[0]);
	uint64_t shape = take(in, 1);
	char sql[1024];
	int len = snprintf(sql, sizeof(sql), "SELECT %s FROM %s", calls && shape % 5 >= 2 ? "*" : SELECTS[shape % 5],
			   calls ? "calls" : "branches");
	int nparams = 0;
	size_t nconds = take(in, 1) % 5;
	for (size_t k = 0; k < nconds && len < 900; k++) {
		const char *c = cols[take(in, 1) % ncols];
		size_t op = take(in, 1) % (sizeof(OPS) / sizeof(OPS[0]));
		len += snprintf(sql + len, sizeof(sql) - (size_t)len, "%s %s %s", k ? " AND" : " WHERE", c, OPS[op]);
		if (op == 8) {
			len += snprintf(sql + len, sizeof(sql) - (size_t)len, " ? AND ?");
			nparams += 2;
		} else if (op == 9) {
			len += snprintf(sql + len, sizeof(sql) - (size_t)len, " (?, ?)");
			nparams += 2;
		} else if (op != 11) {
			len += snprintf(sql + len, sizeof(sql) - (size_t)len, " ?");
			nparams++;
		}
	}
	if (shape & 0x20)
		len += snprintf(sql + len, sizeof(sql) - (size_t)len, " ORDER BY id%s", shape & 0x40 ? " DESC" : "");
	if (shape & 0x80)
		snprintf(sql + len, sizeof(sql) - (size_t)len, " LIMIT ?");
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return 0;               /* the schema lost a table the query names (a row change can do that) */
	for (int i = 1; i <= sqlite3_bind_parameter_count(s); i++) {
		if (shape & 0x80 && i == sqlite3_bind_parameter_count(s))
			sqlite3_bind_int64(s, i, (int64_t)(take(in, 2) % 5000));
		else
			bind_value(s, i, in);
	}
	int rc, calls_left = 0;
	sqlite3_progress_handler(db, PROGRESS_STEPS, progress, &calls_left);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		for (int i = 0; i < sqlite3_column_count(s); i++)
			(void)sqlite3_column_text(s, i);   /* every value converted: text of a NULL, a real */
	sqlite3_progress_handler(db, 0, NULL, NULL);
	const char *msg = sqlite3_errmsg(db);
	int silent = rc != SQLITE_ROW && rc != SQLITE_DONE && (!msg || !*msg);
	sqlite3_finalize(s);
	return silent;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ntmpl)
		load_templates();
	struct in in = { data, size };
	uint64_t head = take(&in, 1);
	size_t t = (size_t)(head % ntmpl);
	if (head & 0x10)
		setenv("RBTRACE_NO_SPLIT", "1", 1);
	else
		unsetenv("RBTRACE_NO_SPLIT");
	if (head & 0x20)
		setenv("RBTRACE_NO_SEEK", "1", 1);
	else
		unsetenv("RBTRACE_NO_SEEK");
	sqlite3 *db;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		abort();
	uint8_t *copy = sqlite3_malloc64(tmpl[t].len);
	if (!copy)
		abort();
	memcpy(copy, tmpl[t].data, tmpl[t].len);
	if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)tmpl[t].len, (sqlite3_int64)tmpl[t].len,
				SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK)
		abort();
	size_t changes = take(&in, 1) % 4;
	for (size_t k = 0; k < changes; k++)
		change_row(db, &in);
	int silent = query(db, &in);
	sqlite3_close(db);
	if (silent) {
		fprintf(stderr, "fuzz_rbtrace: a query failed without an error message\n");
		abort();
	}
	return 0;
}
