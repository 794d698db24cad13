/*
 * pg.c - see pg.h. Workload: one recording's export (thousands to millions
 * of rows) into a server database that holds many recordings. The rows come
 * from the SQLite store's row producer (store.c) through the table writer
 * interface; this file only stores them, as binary COPY (no text for the
 * server to parse). The tables that grow with the recording (samples,
 * calls, call_paths...) are partitioned by recording: their rows go while
 * the session decodes, over -j N connections at once (the streams, each
 * parsed by the server on a core of its own), into tables of the load's
 * own; every other table goes to a spool file. At the end one transaction,
 * the one that inserted the recording's row, sends the spooled tables and
 * attaches the load's own tables as the recording's partitions; the keys
 * and indexes are added (the first time) after the load, as perf's
 * export-to-postgresql.py does. A failure anywhere, a killed rbdecode or a
 * server gone away leaves nothing of the load visible: the server rolls
 * the transaction back, and tables never attached are dropped (by the next
 * load, if this one could not).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pg.h"

/*
 * perf's export-to-postgresql.py tables (its column names: samples.transaction),
 * then ours, each with recording_id first; a row's values follow in the
 * order the row producer gives them (the SQLite schema's).
 */
static const struct pg_table {
	enum rb_table t;
	const char *name, *cols;
	int grows;                    /* grows with the recording: partitioned by recording, loaded over the streams */
} TABLES[] = {
	{ RB_T_EVSEL, "selected_events", "id bigint NOT NULL, name varchar(80)", 0 },
	{ RB_T_MACHINE, "machines", "id bigint NOT NULL, pid integer, root_dir varchar(4096)", 0 },
	{ RB_T_THREAD, "threads", "id bigint NOT NULL, machine_id bigint, process_id bigint, pid integer, tid integer", 0 },
	{ RB_T_COMM, "comms", "id bigint NOT NULL, comm varchar(16), c_thread_id bigint, c_time bigint, exec_flag boolean", 0 },
	{ RB_T_COMM_THREAD, "comm_threads", "id bigint NOT NULL, comm_id bigint, thread_id bigint", 0 },
	{ RB_T_DSO, "dsos", "id bigint NOT NULL, machine_id bigint, short_name varchar(256), long_name varchar(4096),"
			    " build_id varchar(64)", 0 },
	{ RB_T_SYMBOL, "symbols", "id bigint NOT NULL, dso_id bigint, sym_start bigint, sym_end bigint, binding integer,"
				  " name varchar(2048)", 0 },
	{ RB_T_BRANCH_TYPE, "branch_types", "id integer NOT NULL, name varchar(80)", 0 },
	{ RB_T_SAMPLE, "samples", "id bigint NOT NULL, evsel_id bigint, machine_id bigint, thread_id bigint,"
				  " comm_id bigint, dso_id bigint, symbol_id bigint, sym_offset bigint, ip bigint, time bigint,"
				  " cpu integer, to_dso_id bigint, to_symbol_id bigint, to_sym_offset bigint, to_ip bigint,"
				  " period bigint, weight bigint, transaction bigint, data_src bigint, branch_type integer,"
				  " in_tx boolean, call_path_id bigint, insn_count bigint, cyc_count bigint, flags integer", 1 },
	{ RB_T_CALL_PATH, "call_paths", "id bigint NOT NULL, parent_id bigint, symbol_id bigint, ip bigint", 1 },
	{ RB_T_CALL, "calls", "id bigint NOT NULL, thread_id bigint, comm_id bigint, call_path_id bigint,"
			      " call_time bigint, return_time bigint, branch_count bigint, call_id bigint,"
			      " return_id bigint, parent_call_path_id bigint, flags integer, parent_id bigint,"
			      " insn_count bigint, cyc_count bigint", 1 },
	{ RB_T_PTWRITE, "ptwrite", "id bigint NOT NULL, payload bigint, exact_ip boolean", 0 },
	{ RB_T_CBR, "cbr", "id bigint NOT NULL, cbr integer, mhz integer, percent integer", 0 },
	{ RB_T_MWAIT, "mwait", "id bigint NOT NULL, hints integer, extensions integer", 0 },
	{ RB_T_PWRE, "pwre", "id bigint NOT NULL, cstate integer, subcstate integer, hw boolean", 0 },
	{ RB_T_EXSTOP, "exstop", "id bigint NOT NULL, exact_ip boolean", 0 },
	{ RB_T_PWRX, "pwrx", "id bigint NOT NULL, deepest_cstate integer, last_cstate integer, wake_reason integer", 0 },
	{ RB_T_SWITCH, "context_switches", "id bigint NOT NULL, machine_id bigint, time bigint, cpu integer,"
					   " thread_out_id bigint, comm_out_id bigint, thread_in_id bigint,"
					   " comm_in_id bigint, flags integer", 1 },
	/* ours */
	{ RB_T_GAP, "gaps", "id bigint NOT NULL, time_start bigint, time_end bigint, cpu integer, pid integer,"
			    " tid integer, source varchar(32), reason varchar(64), bytes_lost bigint,"
			    " records_lost bigint, file_offset bigint, detail text", 0 },
	{ RB_T_AUX, "aux_buffers", "id bigint NOT NULL, queue integer, cpu integer, tid integer, aux_offset bigint,"
				   " size bigint, file_offset bigint, snapshot_nr integer, reference bigint", 0 },
	{ RB_T_IMC, "imc_records", "id bigint NOT NULL, time bigint, time_estimated boolean, cpu integer, pid integer,"
				   " tid integer, ip bigint, privilege integer, period bigint, timebase bigint,"
				   " cpmc1 bigint, cpmc2 bigint, cpmc3 bigint, cpmc4 bigint, flush_time bigint,"
				   " evsel_id bigint", 1 },
	{ RB_T_IMC_COUNTER, "imc_counters", "id bigint NOT NULL, time bigint, cpu integer, tid integer,"
					    " evsel_id bigint, pmu varchar(64), source varchar(8), value bigint,"
					    " enabled bigint, running bigint", 0 },
	{ RB_T_STAT, "decode_stats", "name varchar(64) NOT NULL, value text", 0 },
	{ RB_T_FTRACE, "ftrace_events", "id bigint NOT NULL, time bigint, cpu integer, pid integer, comm varchar(16),"
					" system varchar(64), name varchar(64), flags integer, preempt_count integer,"
					" fields text, info text, file_offset bigint", 1 },
	{ RB_T_SYNC, "trace_index", "id bigint NOT NULL, source varchar(16), queue integer, cpu integer, tid integer,"
				    " time bigint, aux_pos bigint, file_offset bigint, ip bigint", 1 },
	{ RB_T_SEEK, "trace_seek", "id bigint NOT NULL, source varchar(16), queue integer, cpu integer, time bigint,"
				   " tsc bigint, pos bigint, aux_pos bigint, start_off bigint, start_ord integer,"
				   " start_from bigint, start_to bigint, start_flags integer, sample_seq bigint", 0 },
	{ RB_T_PATH_STAT, "call_path_stats", "call_path_id bigint NOT NULL, calls bigint, total_time bigint,"
					     " self_time bigint, branch_count bigint, insn_count bigint, cyc_count bigint", 0 },
	{ RB_T_EDGE, "branch_edges", "id bigint NOT NULL, from_dso_id bigint, from_symbol_id bigint,"
				     " from_sym_offset bigint, from_ip bigint, to_dso_id bigint, to_symbol_id bigint,"
				     " to_sym_offset bigint, to_ip bigint, branch_type integer, count bigint", 0 },
};
#define NR_TABLES (sizeof(TABLES) / sizeof(TABLES[0]))

/* Every recording loaded: who made it where, and when it was loaded. */
static const char RECORDINGS[] =
	"CREATE TABLE IF NOT EXISTS recordings (id bigserial PRIMARY KEY, host_name text, path text,"
	" header_hash varchar(16), size bigint, perf_version text, arch text, recorded_at timestamptz,"
	" loaded_at timestamptz DEFAULT now(), rbdecode_version text, UNIQUE (header_hash, size));";

/*
 * perf's views (export-to-postgresql.py's columns), and ours, each with
 * recording_id first and every lookup within the row's recording.
 */
#define SUB(col, table, key) "(SELECT " col " FROM " table " z WHERE z.recording_id = x.recording_id AND z.id = " key ")"
static const char VIEWS[] =
	"CREATE OR REPLACE VIEW machines_view AS SELECT recording_id, id, pid, root_dir,"
	" CASE WHEN id=0 THEN 'unknown' WHEN pid=-1 THEN 'host' ELSE 'guest' END AS host_or_guest FROM machines;"
	"CREATE OR REPLACE VIEW dsos_view AS SELECT recording_id, id, machine_id,"
	" " SUB("host_or_guest", "machines_view", "x.machine_id") " AS host_or_guest, short_name, long_name, build_id"
	" FROM dsos x;"
	"CREATE OR REPLACE VIEW symbols_view AS SELECT recording_id, id, name,"
	" " SUB("short_name", "dsos", "x.dso_id") " AS dso, dso_id, sym_start, sym_end,"
	" CASE WHEN binding=0 THEN 'local' WHEN binding=1 THEN 'global' ELSE 'weak' END AS binding FROM symbols x;"
	"CREATE OR REPLACE VIEW threads_view AS SELECT recording_id, id, machine_id,"
	" " SUB("host_or_guest", "machines_view", "x.machine_id") " AS host_or_guest, process_id, pid, tid FROM threads x;"
	"CREATE OR REPLACE VIEW comm_threads_view AS SELECT recording_id, comm_id,"
	" " SUB("comm", "comms", "x.comm_id") " AS command, thread_id,"
	" " SUB("pid", "threads", "x.thread_id") " AS pid, " SUB("tid", "threads", "x.thread_id") " AS tid"
	" FROM comm_threads x;"
	"CREATE OR REPLACE VIEW call_paths_view AS SELECT x.recording_id, x.id, to_hex(x.ip) AS ip, x.symbol_id,"
	" " SUB("name", "symbols", "x.symbol_id") " AS symbol, " SUB("dso_id", "symbols", "x.symbol_id") " AS dso_id,"
	" " SUB("dso", "symbols_view", "x.symbol_id") " AS dso_short_name, x.parent_id, to_hex(p.ip) AS parent_ip,"
	" p.symbol_id AS parent_symbol_id, " SUB("name", "symbols", "p.symbol_id") " AS parent_symbol,"
	" " SUB("dso_id", "symbols", "p.symbol_id") " AS parent_dso_id,"
	" " SUB("dso", "symbols_view", "p.symbol_id") " AS parent_dso_short_name"
	" FROM call_paths x INNER JOIN call_paths p ON p.recording_id = x.recording_id AND p.id = x.parent_id;"
	"CREATE OR REPLACE VIEW calls_view AS SELECT x.recording_id, x.id, x.thread_id,"
	" " SUB("pid", "threads", "x.thread_id") " AS pid, " SUB("tid", "threads", "x.thread_id") " AS tid,"
	" " SUB("comm", "comms", "x.comm_id") " AS command, x.call_path_id, to_hex(c.ip) AS ip, c.symbol_id,"
	" " SUB("name", "symbols", "c.symbol_id") " AS symbol, x.call_time, x.return_time,"
	" x.return_time - x.call_time AS elapsed_time, x.branch_count, x.insn_count, x.cyc_count,"
	" CASE WHEN x.cyc_count=0 THEN CAST(0 AS NUMERIC(20, 2))"
	" ELSE CAST((CAST(x.insn_count AS FLOAT) / x.cyc_count) AS NUMERIC(20, 2)) END AS IPC, x.call_id, x.return_id,"
	" CASE WHEN x.flags=0 THEN '' WHEN x.flags=1 THEN 'no call' WHEN x.flags=2 THEN 'no return'"
	" WHEN x.flags=3 THEN 'no call/return' WHEN x.flags=6 THEN 'jump' ELSE CAST(x.flags AS VARCHAR(6)) END AS flags,"
	" x.parent_call_path_id, x.parent_id"
	" FROM calls x INNER JOIN call_paths c ON c.recording_id = x.recording_id AND c.id = x.call_path_id;"
	"CREATE OR REPLACE VIEW samples_view AS SELECT recording_id, id, time, cpu,"
	" " SUB("pid", "threads", "x.thread_id") " AS pid, " SUB("tid", "threads", "x.thread_id") " AS tid,"
	" " SUB("comm", "comms", "x.comm_id") " AS command, " SUB("name", "selected_events", "x.evsel_id") " AS event,"
	" to_hex(ip) AS ip_hex, " SUB("name", "symbols", "x.symbol_id") " AS symbol, sym_offset,"
	" " SUB("short_name", "dsos", "x.dso_id") " AS dso_short_name, to_hex(to_ip) AS to_ip_hex,"
	" " SUB("name", "symbols", "x.to_symbol_id") " AS to_symbol, to_sym_offset,"
	" " SUB("short_name", "dsos", "x.to_dso_id") " AS to_dso_short_name,"
	" " SUB("name", "branch_types", "x.branch_type") " AS branch_type_name, in_tx, insn_count, cyc_count,"
	" CASE WHEN cyc_count=0 THEN CAST(0 AS NUMERIC(20, 2))"
	" ELSE CAST((CAST(insn_count AS FLOAT) / cyc_count) AS NUMERIC(20, 2)) END AS IPC, flags FROM samples x;"
	"CREATE OR REPLACE VIEW context_switches_view AS SELECT x.recording_id, x.id, x.machine_id, x.time, x.cpu,"
	" th_out.pid AS pid_out, th_out.tid AS tid_out, comm_out.comm AS comm_out,"
	" th_in.pid AS pid_in, th_in.tid AS tid_in, comm_in.comm AS comm_in,"
	" CASE WHEN x.flags = 0 THEN 'in' WHEN x.flags = 1 THEN 'out' WHEN x.flags = 3 THEN 'out preempt'"
	" ELSE CAST(x.flags AS VARCHAR(11)) END AS flags FROM context_switches x"
	" INNER JOIN threads th_out ON th_out.recording_id = x.recording_id AND th_out.id = x.thread_out_id"
	" INNER JOIN threads th_in ON th_in.recording_id = x.recording_id AND th_in.id = x.thread_in_id"
	" INNER JOIN comms comm_out ON comm_out.recording_id = x.recording_id AND comm_out.id = x.comm_out_id"
	" INNER JOIN comms comm_in ON comm_in.recording_id = x.recording_id AND comm_in.id = x.comm_in_id;"
	/* ours */
	"CREATE OR REPLACE VIEW gaps_view AS SELECT recording_id, id, time_start, time_end,"
	" time_end - time_start AS duration, cpu, pid, tid, source, reason, bytes_lost, records_lost, file_offset,"
	" detail FROM gaps;"
	"CREATE OR REPLACE VIEW function_stats AS SELECT t.recording_id, p.symbol_id, s.name, d.short_name AS dso,"
	" sum(t.calls) AS calls, sum(t.self_time) AS self_time, sum(t.total_time) AS total_time_all_levels,"
	" sum(t.branch_count) AS branch_count, sum(t.insn_count) AS insn_count, sum(t.cyc_count) AS cyc_count"
	" FROM call_path_stats t JOIN call_paths p ON p.recording_id = t.recording_id AND p.id = t.call_path_id"
	" LEFT JOIN symbols s ON s.recording_id = t.recording_id AND s.id = p.symbol_id"
	" LEFT JOIN dsos d ON d.recording_id = t.recording_id AND d.id = s.dso_id"
	" GROUP BY t.recording_id, p.symbol_id, s.name, d.short_name;"
	"CREATE OR REPLACE VIEW branch_edges_view AS SELECT recording_id, id, to_hex(from_ip) AS from_ip,"
	" " SUB("name", "symbols", "x.from_symbol_id") " AS from_symbol, from_sym_offset, to_hex(to_ip) AS to_ip,"
	" " SUB("name", "symbols", "x.to_symbol_id") " AS to_symbol, to_sym_offset,"
	" " SUB("name", "branch_types", "x.branch_type") " AS branch_type, count FROM branch_edges x;";

/* Indexes beside the keys, added after the first load (as SQLite's INDEXES). */
static const char INDEXES[] =
	"CREATE INDEX IF NOT EXISTS samples_time_idx ON samples (recording_id, time);"
	"CREATE INDEX IF NOT EXISTS call_paths_parent_idx ON call_paths (recording_id, parent_id);"
	"CREATE INDEX IF NOT EXISTS calls_parent_idx ON calls (recording_id, parent_id);"
	"CREATE INDEX IF NOT EXISTS context_switches_time_idx ON context_switches (recording_id, cpu, time);"
	"CREATE INDEX IF NOT EXISTS trace_index_time_idx ON trace_index (recording_id, queue, time);";

/*
 * The tables that grow with the recording (grows in TABLES) are partitioned
 * by recording. A load COPYs its rows of them into tables of its own
 * (samples_r<id>, ...) over several connections at once (the streams, -j N:
 * the server parses each on a core of its own), each stream in its own
 * transaction; the load's transaction, on the main connection, attaches
 * them as the recording's partitions at the end, with every other table and
 * the recording's row. Until then they are no part of samples, calls...: a
 * failed load drops them, and one killed leaves them unattached, for the
 * next load to drop once their loader's advisory lock is gone. A database
 * whose table is a plain one (made before partitioning) loads that table on
 * the main connection as before.
 */
#define STREAM_LOCK "2025052002"     /* advisory lock class: (class, recording id) held while a load runs */
#define BUF_BYTES (256 << 10)        /* rows of one table handed to a stream at once */
#define QUEUE_LEN 4                  /* buffers waiting per stream */

struct buf {
	struct buf *next;
	enum rb_table t;
	size_t len, cap;
	char *data;
};

struct stream {
	struct rb_pg *pg;
	PGconn *conn;
	pthread_t th;
	int th_started;
	struct buf *qhead, *qtail;    /* waiting to be sent, under pg->mu */
	int qn;
	int open_t;                   /* the table whose COPY is open, -1 none */
	int in_tx;
	char msg[512];                /* the server's message, on one line */
};

struct rb_pg {
	struct rb_table_writer w;
	PGconn *conn;                 /* the main connection: the load's transaction */
	int64_t recording_id;
	int64_t old_id;               /* --force: the recording being replaced, 0 none */
	FILE *spool[RB_T_COUNT];      /* each table's COPY rows (binary), recording_id first; NULL until a row comes */
	int live;                     /* COPY samples (a plain table) is open on the main connection */
	char *line;                   /* one row's COPY data being made */
	size_t line_len, line_cap;
	struct stat_row { char *name, *value; } *stats;   /* decode_stats, a later name replacing an earlier */
	size_t nr_stats, cap_stats;
	int in_tx;                    /* the load's transaction is open */
	int committed;
	int failed;                   /* read without the lock by the session thread (atomic) */
	char err[768];
	char msg[512];                /* the main connection's message, on one line */
	/* the streams */
	uint8_t parted[RB_T_COUNT];   /* the table is partitioned: its rows go over the streams */
	uint8_t sent[RB_T_COUNT];     /* rows of it went to a stream */
	int staged;                   /* the load's own tables (samples_r<id>...) exist */
	struct stream *st;
	int nr_st, next_st;
	struct buf *cur[RB_T_COUNT];  /* each partitioned table's rows being gathered */
	struct buf *free_bufs;        /* under mu */
	pthread_mutex_t mu;           /* the queues, the free buffers, the error, stop and closing */
	pthread_cond_t cv;
	int stop;                     /* a failure or an abort: the streams send nothing more */
	int closing;                  /* every row was given: the streams send what is queued and commit */
};

static const struct pg_table *table_of(enum rb_table t)
{
	for (size_t i = 0; i < NR_TABLES; i++)
		if (TABLES[i].t == t)
			return &TABLES[i];
	return NULL;
}

/* @c's message into @buf, on one line: its line breaks and indents folded into one space each. */
static const char *server_msg(PGconn *c, char *buf, size_t len)
{
	const char *m = c ? PQerrorMessage(c) : "out of memory";
	size_t o = 0;
	for (; *m && o + 1 < len; m++) {
		int space = *m == '\n' || *m == '\t' || *m == ' ';
		if (!space)
			buf[o++] = *m;
		else if (o && buf[o - 1] != ' ')
			buf[o++] = ' ';
	}
	while (o && buf[o - 1] == ' ')
		o--;
	buf[o] = 0;
	return buf;
}

#define MAIN_MSG(pg) server_msg((pg)->conn, (pg)->msg, sizeof((pg)->msg))

/* The server's notices (a shutdown's "terminating connection") are not ours to print: its error says it. */
static void quiet_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* The load failed (the first reason is kept); the streams stop. Any thread. */
static int pg_fail(struct rb_pg *pg, const char *what, const char *why)
{
	pthread_mutex_lock(&pg->mu);
	if (!pg->failed)
		snprintf(pg->err, sizeof(pg->err), "postgresql: %s: %s", what, why);
	__atomic_store_n(&pg->failed, 1, __ATOMIC_RELEASE);
	pg->stop = 1;
	pthread_cond_broadcast(&pg->cv);
	pthread_mutex_unlock(&pg->mu);
	return -1;
}

static int failed(struct rb_pg *pg)
{
	return __atomic_load_n(&pg->failed, __ATOMIC_ACQUIRE);
}

/* Run @sql (one or more statements, no result wanted) on the main connection. */
static int pg_exec(struct rb_pg *pg, const char *sql, const char *what)
{
	PGresult *r = PQexec(pg->conn, sql);
	int ok = r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
	PQclear(r);
	return ok ? 0 : pg_fail(pg, what, MAIN_MSG(pg));
}

/* One value of a query with parameters on @c, as text into @out ("" for none); 0 or -1 (not failing the load). */
static int conn_value(PGconn *c, const char *sql, int n, const char *const *params, char *out, size_t len)
{
	PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	int ok = r && (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK);
	if (ok && out)
		snprintf(out, len, "%s", PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
	return ok ? 0 : -1;
}

/* The same on the main connection, failing the load. */
static int pg_value(struct rb_pg *pg, const char *sql, int n, const char *const *params, char *out, size_t len,
		    const char *what)
{
	return conn_value(pg->conn, sql, n, params, out, len) ? pg_fail(pg, what, MAIN_MSG(pg)) : 0;
}

/* ------------------------------------------------------------- rows */

/* Room for @need bytes in *@buf of *@cap (doubled from @first, or from *@cap); 0, or -1 out of memory. */
static int grow(char **buf, size_t *cap, size_t need, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : first;
	while (c < need)
		c *= 2;
	char *b = realloc(*buf, c);
	if (!b)
		return -1;
	*buf = b;
	*cap = c;
	return 0;
}

/* Room for @n more bytes in the row being made. */
static int line_room(struct rb_pg *pg, size_t n)
{
	return grow(&pg->line, &pg->line_cap, pg->line_len + n, 1024) ? pg_fail(pg, "row", "out of memory") : 0;
}

/*
 * Rows go as binary COPY (PostgreSQL's "PGCOPY" format: no text for the
 * server to parse): per row the field count, then each field's length and
 * bytes, integers in network byte order. Each column's type comes from its
 * definition in TABLES (bigint, integer, boolean, else text).
 */
enum { COL_TEXT, COL_INT8, COL_INT4, COL_BOOL };
#define MAX_COLS 32

static unsigned char col_types[NR_TABLES][MAX_COLS];
static int col_types_known;

static void parse_col_types(void)
{
	for (size_t i = 0; i < NR_TABLES; i++) {
		size_t k = 0;
		for (const char *p = TABLES[i].cols; *p && k < MAX_COLS; k++) {
			const char *type = p + strcspn(p, " ") + 1;
			col_types[i][k] = !strncmp(type, "bigint", 6) ? COL_INT8 : !strncmp(type, "integer", 7) ? COL_INT4
					  : !strncmp(type, "boolean", 7) ? COL_BOOL : COL_TEXT;
			const char *c = strchr(p, ',');
			if (!c)
				break;
			p = c + 1 + strspn(c + 1, " ");
		}
	}
	col_types_known = 1;
}

static inline void put_be(struct rb_pg *pg, uint64_t v, int bytes)
{
	for (int b = bytes - 1; b >= 0; b--)
		pg->line[pg->line_len++] = (char)(v >> (8 * b));
}

/* A text field: its length and bytes. */
static int put_text(struct rb_pg *pg, const char *s)
{
	size_t n = strlen(s);
	if (n > INT32_MAX || line_room(pg, 4 + n))
		return -1;
	put_be(pg, n, 4);
	memcpy(pg->line + pg->line_len, s, n);
	pg->line_len += n;
	return 0;
}

/* Start a row of @n values after its recording_id, with room for the fixed-size ones. */
static int row_begin(struct rb_pg *pg, int n)
{
	pg->line_len = 0;
	if (line_room(pg, 2 + 12 + 12 * (size_t)n))
		return -1;
	put_be(pg, (uint64_t)(n + 1), 2);
	put_be(pg, 8, 4);
	put_be(pg, (uint64_t)pg->recording_id, 8);
	return 0;
}

/* Value @v of column @col of table @ti into the row being made. */
static int put_value(struct rb_pg *pg, size_t ti, int col, const struct rb_tval *v, const char *table)
{
	int type = col < MAX_COLS ? col_types[ti][col] : COL_TEXT;
	char num[24];
	if (type == COL_TEXT)
		return put_text(pg, v->text ? v->s : (snprintf(num, sizeof(num), "%" PRId64, v->i), num));
	int64_t i = v->i;
	if (v->text) {              /* a number given as text: the server would parse it */
		char *end;
		errno = 0;
		i = strtoll(v->s, &end, 10);
		if (end == v->s || *end || errno)
			return pg_fail(pg, table, "internal: a value that is not a number for a number column");
	}
	if (line_room(pg, 12))
		return -1;
	if (type == COL_INT8) {
		put_be(pg, 8, 4);
		put_be(pg, (uint64_t)i, 8);
	} else if (type == COL_INT4) {
		if (i < INT32_MIN || i > INT32_MAX) {
			char msg[160];
			snprintf(msg, sizeof(msg), "value %" PRId64 " out of range for type integer (column %d)", i, col + 1);
			return pg_fail(pg, table, msg);
		}
		put_be(pg, 4, 4);
		put_be(pg, (uint64_t)(uint32_t)(int32_t)i, 4);
	} else {
		put_be(pg, 1, 4);
		pg->line[pg->line_len++] = i != 0;
	}
	return 0;
}

static int stat_row(struct rb_pg *pg, const struct rb_tval *v)
{
	char num[32];
	const char *value = v[1].text ? v[1].s : (snprintf(num, sizeof(num), "%" PRId64, v[1].i), num);
	for (size_t i = 0; i < pg->nr_stats; i++)
		if (!strcmp(pg->stats[i].name, v[0].s)) {
			char *s = strdup(value);
			if (!s)
				return pg_fail(pg, "decode_stats", "out of memory");
			free(pg->stats[i].value);
			pg->stats[i].value = s;
			return 0;
		}
	if (pg->nr_stats == pg->cap_stats) {
		size_t n = pg->cap_stats ? 2 * pg->cap_stats : 32;
		struct stat_row *s = realloc(pg->stats, n * sizeof(*s));
		if (!s)
			return pg_fail(pg, "decode_stats", "out of memory");
		pg->stats = s;
		pg->cap_stats = n;
	}
	struct stat_row *s = &pg->stats[pg->nr_stats];
	s->name = strdup(v[0].s);
	s->value = strdup(value);
	if (!s->name || !s->value) {
		free(s->name);
		free(s->value);
		return pg_fail(pg, "decode_stats", "out of memory");
	}
	pg->nr_stats++;
	return 0;
}

/* ------------------------------------------------------------- COPY */

/* "recording_id, a, b, ..." from a table's column definitions: each definition's first word. */
static void column_list(const struct pg_table *t, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "recording_id");
	for (const char *p = t->cols; *p && o < len;) {
		size_t w = strcspn(p, " ");
		o += (size_t)snprintf(out + o, len - o, ", %.*s", (int)w, p);
		const char *c = strchr(p, ',');
		if (!c)
			break;
		p = c + 2;
	}
}

/* The name of the load's own table for @t's rows: samples_r<id>. */
static void staged_name(const struct pg_table *t, int64_t id, char *out, size_t len)
{
	snprintf(out, len, "%s_r%" PRId64, t->name, id);
}

/* Open COPY into @into (@t's columns) on @c; 0, or -1 with @c's message in @msg. */
static int copy_start(PGconn *c, const struct pg_table *t, const char *into, char *msg, size_t msglen)
{
	char cols[1024], sql[1200];
	column_list(t, cols, sizeof(cols));
	snprintf(sql, sizeof(sql), "COPY %s (%s) FROM STDIN (FORMAT binary)", into, cols);
	PGresult *r = PQexec(c, sql);
	int st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	PQclear(r);
	/* the binary format's header: signature, flags, no extension */
	static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	if (st != PGRES_COPY_IN || PQputCopyData(c, header, (int)sizeof(header)) != 1) {
		server_msg(c, msg, msglen);
		return -1;
	}
	return 0;
}

/* End the open COPY on @c (@ok 0: something failed sending it already); 0, or -1 with the message in @msg. */
static int copy_end(PGconn *c, int ok, char *msg, size_t msglen)
{
	PGresult *r;
	static const char trailer[2] = { '\377', '\377' };      /* the binary format's end: field count -1 */
	ok = ok && PQputCopyData(c, trailer, 2) == 1;
	ok = PQputCopyEnd(c, ok ? NULL : "rbdecode could not send the rows") == 1 && ok;
	int good = ok;
	while ((r = PQgetResult(c))) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			good = 0;
		PQclear(r);
	}
	if (!good)
		server_msg(c, msg, msglen);
	return good ? 0 : -1;
}

/* Give up the open COPY on @c: the server discards it. */
static void copy_cancel(PGconn *c, const char *why)
{
	PGresult *r;
	PQputCopyEnd(c, why);
	while ((r = PQgetResult(c)))
		PQclear(r);
}

/* Send what is in @f into COPY @t on the main connection. */
static int copy_in(struct rb_pg *pg, const struct pg_table *t, FILE *f)
{
	if (copy_start(pg->conn, t, t->name, pg->msg, sizeof(pg->msg)))
		return pg_fail(pg, t->name, pg->msg);
	int ok = 1;
	char buf[1 << 16];
	size_t n;
	rewind(f);
	while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		ok = PQputCopyData(pg->conn, buf, (int)n) == 1;
	if (ferror(f)) {
		copy_cancel(pg->conn, "spool file read error");
		return pg_fail(pg, t->name, "cannot read back its spool file");
	}
	return copy_end(pg->conn, ok, pg->msg, sizeof(pg->msg)) ? pg_fail(pg, t->name, pg->msg) : 0;
}

/* decode_stats, one row per name (the last value given), from memory. */
static int copy_stats(struct rb_pg *pg)
{
	const struct pg_table *t = table_of(RB_T_STAT);
	if (copy_start(pg->conn, t, t->name, pg->msg, sizeof(pg->msg)))
		return pg_fail(pg, t->name, pg->msg);
	int ok = 1;
	for (size_t i = 0; i < pg->nr_stats && ok; i++) {
		ok = !row_begin(pg, 2) && !put_text(pg, pg->stats[i].name) && !put_text(pg, pg->stats[i].value);
		if (ok)
			ok = PQputCopyData(pg->conn, pg->line, (int)pg->line_len) == 1;
	}
	return copy_end(pg->conn, ok, pg->msg, sizeof(pg->msg)) ? pg_fail(pg, t->name, pg->msg) : 0;
}

/* ------------------------------------------------------------- streams */

/* A buffer for @t's rows: a free one, or a new one. */
static struct buf *buf_get(struct rb_pg *pg, enum rb_table t)
{
	pthread_mutex_lock(&pg->mu);
	struct buf *b = pg->free_bufs;
	if (b)
		pg->free_bufs = b->next;
	pthread_mutex_unlock(&pg->mu);
	if (!b && !(b = calloc(1, sizeof(*b))))
		return NULL;
	b->t = t;
	b->len = 0;
	b->next = NULL;
	return b;
}

static void buf_put(struct rb_pg *pg, struct buf *b)
{
	pthread_mutex_lock(&pg->mu);
	b->next = pg->free_bufs;
	pg->free_bufs = b;
	pthread_mutex_unlock(&pg->mu);
}

static void buf_free_list(struct buf *b)
{
	while (b) {
		struct buf *n = b->next;
		free(b->data);
		free(b);
		b = n;
	}
}

/* Hand @b to the next stream, waiting while its queue is full. */
static int dispatch(struct rb_pg *pg, struct buf *b)
{
	struct stream *s = &pg->st[pg->next_st];
	pg->next_st = (pg->next_st + 1) % pg->nr_st;
	pg->sent[b->t] = 1;
	pthread_mutex_lock(&pg->mu);
	while (s->qn >= QUEUE_LEN && !pg->stop)
		pthread_cond_wait(&pg->cv, &pg->mu);
	if (pg->stop) {
		pthread_mutex_unlock(&pg->mu);
		buf_put(pg, b);
		return -1;
	}
	if (s->qtail)
		s->qtail->next = b;
	else
		s->qhead = b;
	s->qtail = b;
	s->qn++;
	pthread_cond_broadcast(&pg->cv);
	pthread_mutex_unlock(&pg->mu);
	return 0;
}

/* The row being made, to the buffer of its (partitioned) table @t; a full buffer to a stream. */
static int stream_row(struct rb_pg *pg, enum rb_table t)
{
	struct buf *b = pg->cur[t];
	if (!b && !(b = pg->cur[t] = buf_get(pg, t)))
		return pg_fail(pg, "row", "out of memory");
	if (grow(&b->data, &b->cap, b->len + pg->line_len, BUF_BYTES))
		return pg_fail(pg, "row", "out of memory");
	memcpy(b->data + b->len, pg->line, pg->line_len);
	b->len += pg->line_len;
	if (b->len < BUF_BYTES)
		return 0;
	pg->cur[t] = NULL;
	return dispatch(pg, b);
}

/* Send @b on stream @s: COPY into the load's own table for it. */
static int stream_send(struct rb_pg *pg, struct stream *s, const struct buf *b)
{
	const struct pg_table *t = table_of(b->t);
	if (s->open_t != (int)b->t) {
		if (s->open_t >= 0) {
			const struct pg_table *o = table_of((enum rb_table)s->open_t);
			s->open_t = -1;
			if (copy_end(s->conn, 1, s->msg, sizeof(s->msg)))
				return pg_fail(pg, o->name, s->msg);
		}
		char into[128];
		staged_name(t, pg->recording_id, into, sizeof(into));
		if (copy_start(s->conn, t, into, s->msg, sizeof(s->msg)))
			return pg_fail(pg, t->name, s->msg);
		s->open_t = (int)b->t;
	}
	if (PQputCopyData(s->conn, b->data, (int)b->len) != 1)
		return pg_fail(pg, t->name, server_msg(s->conn, s->msg, sizeof(s->msg)));
	return 0;
}

/* A stream's thread: send what comes; at the close, end the COPY and commit; on a stop, give up. */
static void *stream_main(void *arg)
{
	struct stream *s = arg;
	struct rb_pg *pg = s->pg;
	for (;;) {
		pthread_mutex_lock(&pg->mu);
		while (!s->qhead && !pg->closing && !pg->stop)
			pthread_cond_wait(&pg->cv, &pg->mu);
		struct buf *b = pg->stop ? NULL : s->qhead;
		if (b) {
			s->qhead = b->next;
			if (!s->qhead)
				s->qtail = NULL;
			s->qn--;
			pthread_cond_broadcast(&pg->cv);
		}
		pthread_mutex_unlock(&pg->mu);
		if (!b)
			break;
		int rc = stream_send(pg, s, b);
		buf_put(pg, b);
		if (rc)
			break;
	}
	pthread_mutex_lock(&pg->mu);
	int stop = pg->stop;
	pthread_mutex_unlock(&pg->mu);
	if (s->open_t >= 0) {
		const struct pg_table *o = table_of((enum rb_table)s->open_t);
		s->open_t = -1;
		if (stop)
			copy_cancel(s->conn, "rbdecode gave up the load");
		else if (copy_end(s->conn, 1, s->msg, sizeof(s->msg)))
			stop = pg_fail(pg, o->name, s->msg);
	}
	if (!stop) {
		PGresult *r = PQexec(s->conn, "COMMIT");
		if (r && PQresultStatus(r) == PGRES_COMMAND_OK)
			s->in_tx = 0;
		else
			pg_fail(pg, "commit", server_msg(s->conn, s->msg, sizeof(s->msg)));
		PQclear(r);
	}
	return NULL;
}

/* Stop the streams (@commit 0) or let them send the rest and commit (1); wait for them. */
static void streams_end(struct rb_pg *pg, int commit)
{
	pthread_mutex_lock(&pg->mu);
	if (commit)
		pg->closing = 1;
	else
		pg->stop = 1;
	pthread_cond_broadcast(&pg->cv);
	pthread_mutex_unlock(&pg->mu);
	for (int i = 0; i < pg->nr_st; i++)
		if (pg->st[i].th_started) {
			pthread_join(pg->st[i].th, NULL);
			pg->st[i].th_started = 0;
		}
}

/* ------------------------------------------------------------- the writer */

static int pg_row(void *ctx, enum rb_table t, const struct rb_tval *v, int n)
{
	struct rb_pg *pg = ctx;
	if (failed(pg))
		return -1;
	if (t == RB_T_STAT)
		return n == 2 && !v[0].text ? pg_fail(pg, "decode_stats", "internal: a name that is not text")
		       : n == 2 ? stat_row(pg, v) : pg_fail(pg, "decode_stats", "internal: not 2 values");
	if ((unsigned)t >= RB_T_COUNT)
		return pg_fail(pg, "row", "internal: no such table");
	/* the row: recording_id, then each value as its column's type */
	const struct pg_table *tab = table_of(t);
	if (!tab)
		return pg_fail(pg, "row", "internal: no such table");
	if (!col_types_known)
		parse_col_types();
	size_t ti = (size_t)(tab - TABLES);
	if (row_begin(pg, n))
		return -1;
	for (int i = 0; i < n; i++)
		if (put_value(pg, ti, i, &v[i], tab->name))
			return -1;
	if (pg->parted[t])
		return stream_row(pg, t);
	if (t == RB_T_SAMPLE && pg->live)
		return PQputCopyData(pg->conn, pg->line, (int)pg->line_len) == 1 ? 0 : pg_fail(pg, "samples", MAIN_MSG(pg));
	FILE *f = pg->spool[t];
	if (!f && !(f = pg->spool[t] = tmpfile()))
		return pg_fail(pg, "spool file", strerror(errno));
	if (fwrite(pg->line, 1, pg->line_len, f) != pg->line_len)
		return pg_fail(pg, "spool file", strerror(errno));
	return 0;
}

/*
 * The keys, as perf's script adds them after its load, here keyed by
 * recording too: once, by the first load that finds them missing and no
 * other load running. Adding a key needs its table alone, and a load
 * running beside this one holds its tables until it commits: waiting for
 * it while holding a table it needs next would deadlock. So every table is
 * locked first, without waiting (NOWAIT), in a savepoint; if any is busy,
 * or anything else fails, the savepoint is rolled back and the load goes
 * on without keys (its rows are already in): a later load adds them. On a
 * partitioned table the keys reach every partition, and each partition
 * attached later gets them when it is attached.
 * Returns 0, or -1 if the transaction itself failed.
 */
static int add_keys(struct rb_pg *pg)
{
	char have[8];
	if (pg_value(pg, "SELECT to_regclass('samples_pkey') IS NOT NULL", 0, NULL, have, sizeof(have), "keys"))
		return -1;
	if (!strcmp(have, "t"))
		return 0;
	char lock[1024];
	size_t o = (size_t)snprintf(lock, sizeof(lock), "LOCK TABLE");
	for (size_t i = 0; i < NR_TABLES && o < sizeof(lock); i++)
		o += (size_t)snprintf(lock + o, sizeof(lock) - o, "%s %s", i ? "," : "", TABLES[i].name);
	if (o < sizeof(lock))
		snprintf(lock + o, sizeof(lock) - o, " IN ACCESS EXCLUSIVE MODE NOWAIT");
	if (pg_exec(pg, "SAVEPOINT rb_keys", "keys"))
		return -1;
	pg_exec(pg, lock, "keys");
	for (size_t i = 0; i < NR_TABLES && !failed(pg); i++) {
		char sql[256], key[64];
		snprintf(key, sizeof(key), "%.*s", (int)strcspn(TABLES[i].cols, " "), TABLES[i].cols);
		snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD PRIMARY KEY (recording_id, %s)", TABLES[i].name, key);
		pg_exec(pg, sql, "keys");
	}
	pg_exec(pg, INDEXES, "indexes");
	if (!failed(pg))
		return pg_exec(pg, "RELEASE SAVEPOINT rb_keys", "keys");
	pg->failed = 0;                /* another load holds the tables, or added them first (the streams are done) */
	pg->err[0] = 0;
	return pg_exec(pg, "ROLLBACK TO SAVEPOINT rb_keys", "keys");
}

/* comms.has_calls, as perf's export sets it: true where the comm has calls (as the store noted them). */
static int set_has_calls(struct rb_pg *pg, const uint8_t *call_comms, size_t n)
{
	char id[32];
	snprintf(id, sizeof(id), "%" PRId64, pg->recording_id);
	if (!call_comms) {
		const char *p[] = { id };
		return pg_value(pg, "UPDATE comms SET has_calls = true WHERE recording_id = $1 AND id IN"
				" (SELECT DISTINCT comm_id FROM calls WHERE recording_id = $1)", 1, p, NULL, 0,
				"comms.has_calls");
	}
	size_t len = 0;
	char *ids = NULL;
	FILE *f = open_memstream(&ids, &len);
	if (!f)
		return pg_fail(pg, "comms.has_calls", "out of memory");
	putc('{', f);
	for (size_t i = 0, k = 0; i < n; i++)
		if (call_comms[i])
			fprintf(f, "%s%zu", k++ ? "," : "", i);
	putc('}', f);
	if (fclose(f))
		return pg_fail(pg, "comms.has_calls", "out of memory");
	const char *p[] = { id, ids };
	int rc = pg_value(pg, "UPDATE comms SET has_calls = true WHERE recording_id = $1 AND id = ANY($2::bigint[])",
			  2, p, NULL, 0, "comms.has_calls");
	free(ids);
	return rc;
}

/*
 * The load's own tables become the recording's partitions (the CHECK each
 * was made with spares the server a scan); one with no rows, or the calls
 * the store drops, goes. The replaced recording's partitions go too.
 */
static int attach_parts(struct rb_pg *pg, int calls_dropped)
{
	for (size_t i = 0; i < NR_TABLES && !failed(pg); i++) {
		enum rb_table t = TABLES[i].t;
		if (!pg->parted[t])
			continue;
		char own[128], sql[512];
		if (pg->old_id) {
			staged_name(&TABLES[i], pg->old_id, own, sizeof(own));
			snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", own);
			if (pg_exec(pg, sql, TABLES[i].name))
				break;
		}
		staged_name(&TABLES[i], pg->recording_id, own, sizeof(own));
		if (pg->sent[t] && !(t == RB_T_CALL && calls_dropped))
			snprintf(sql, sizeof(sql), "ALTER TABLE %s ATTACH PARTITION %s FOR VALUES IN (%" PRId64 ")",
				 TABLES[i].name, own, pg->recording_id);
		else
			snprintf(sql, sizeof(sql), "DROP TABLE %s", own);
		pg_exec(pg, sql, TABLES[i].name);
	}
	return failed(pg) ? -1 : 0;
}

static int pg_finish(void *ctx, const uint64_t *rows, int calls_dropped, const uint8_t *call_comms,
		     size_t nr_call_comms)
{
	struct rb_pg *pg = ctx;
	/* the streams: what is gathered, then their commits */
	for (int t = 0; t < RB_T_COUNT && !failed(pg); t++)
		if (pg->cur[t]) {
			struct buf *b = pg->cur[t];
			pg->cur[t] = NULL;
			dispatch(pg, b);
		}
	streams_end(pg, !failed(pg));
	if (pg->live && !failed(pg)) {
		pg->live = 0;
		if (copy_end(pg->conn, 1, pg->msg, sizeof(pg->msg)))
			pg_fail(pg, "samples", pg->msg);
	}
	for (size_t i = 0; i < NR_TABLES && !failed(pg); i++) {
		enum rb_table t = TABLES[i].t;
		if (t == RB_T_STAT || !pg->spool[t] || (t == RB_T_CALL && calls_dropped))
			continue;
		if (fflush(pg->spool[t]))
			return pg_fail(pg, "spool file", strerror(errno));
		copy_in(pg, &TABLES[i], pg->spool[t]);
	}
	if (!failed(pg))
		copy_stats(pg);
	if (!failed(pg))
		attach_parts(pg, calls_dropped);
	if (!failed(pg) && rows[RB_T_CALL])
		set_has_calls(pg, call_comms, nr_call_comms);
	if (!failed(pg))
		add_keys(pg);
	if (!failed(pg) && !pg_exec(pg, "COMMIT", "commit")) {
		pg->in_tx = 0;
		pg->committed = 1;
	}
	return failed(pg) ? -1 : 0;
}

/* The load's own tables, when it did not commit: dropped (if the server is there; else the next load does). */
static void drop_staged(struct rb_pg *pg)
{
	char sql[2048];
	size_t o = (size_t)snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS");
	int n = 0;
	for (size_t i = 0; i < NR_TABLES; i++)
		if (pg->parted[TABLES[i].t]) {
			char own[128];
			staged_name(&TABLES[i], pg->recording_id, own, sizeof(own));
			o += (size_t)snprintf(sql + o, sizeof(sql) - o, "%s %s", n++ ? "," : "", own);
		}
	if (n && o < sizeof(sql))
		PQclear(PQexec(pg->conn, sql));
}

static void pg_free(void *ctx)
{
	struct rb_pg *pg = ctx;
	if (!pg)
		return;
	streams_end(pg, 0);
	for (int i = 0; i < pg->nr_st; i++) {
		struct stream *s = &pg->st[i];
		if (s->conn && s->in_tx)
			PQclear(PQexec(s->conn, "ROLLBACK"));
		if (s->conn)
			PQfinish(s->conn);
		buf_free_list(s->qhead);
	}
	free(pg->st);
	if (pg->conn) {
		if (pg->live)               /* a COPY still open: end it as failed, then roll back */
			copy_cancel(pg->conn, "rbdecode gave up the load");
		if (pg->in_tx)
			PQclear(PQexec(pg->conn, "ROLLBACK"));
		if (pg->staged && !pg->committed)
			drop_staged(pg);
		PQfinish(pg->conn);
	}
	for (int i = 0; i < RB_T_COUNT; i++) {
		if (pg->spool[i])
			fclose(pg->spool[i]);
		buf_free_list(pg->cur[i]);
	}
	buf_free_list(pg->free_bufs);
	for (size_t i = 0; i < pg->nr_stats; i++) {
		free(pg->stats[i].name);
		free(pg->stats[i].value);
	}
	free(pg->stats);
	free(pg->line);
	pthread_cond_destroy(&pg->cv);
	pthread_mutex_destroy(&pg->mu);
	free(pg);
}

static const char *pg_error(void *ctx)
{
	struct rb_pg *pg = ctx;
	pthread_mutex_lock(&pg->mu);
	const char *e = pg->failed ? pg->err : NULL;
	pthread_mutex_unlock(&pg->mu);
	return e;
}

/* ------------------------------------------------------------- open */

int rb_pg_is_target(const char *s)
{
	return s && (!strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11));
}

/* A connection with @conninfo; NULL with the reason in @msg. */
static PGconn *pg_connect(const char *conninfo, char *msg, size_t msglen)
{
	/* a connect_timeout in @conninfo (or PGCONNECT_TIMEOUT) wins over ours, which is only there so nothing hangs */
	const char *keys[] = { "connect_timeout", "fallback_application_name", "dbname", NULL };
	const char *vals[] = { getenv("PGCONNECT_TIMEOUT") ? NULL : "10", "rbdecode", conninfo, NULL };
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	if (!c || PQstatus(c) != CONNECTION_OK) {
		char why[512];
		snprintf(msg, msglen, "postgresql: cannot connect: %s", server_msg(c, why, sizeof(why)));
		PQfinish(c);
		return NULL;
	}
	PQsetNoticeProcessor(c, quiet_notice, NULL);
	return c;
}

/*
 * The tables, created if missing (the growing ones partitioned by
 * recording), in a transaction of their own under an advisory lock (two
 * first loads at once); then which tables are partitioned here.
 */
static int create_schema(struct rb_pg *pg)
{
	if (pg_exec(pg, "SET client_min_messages TO WARNING; BEGIN; SELECT pg_advisory_xact_lock(2025052001)", "schema"))
		return -1;
	pg_exec(pg, RECORDINGS, "schema");
	for (size_t i = 0; i < NR_TABLES && !failed(pg); i++) {
		char sql[2048];
		snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS %s (recording_id bigint NOT NULL, %s)%s",
			 TABLES[i].name, TABLES[i].cols, TABLES[i].grows ? " PARTITION BY LIST (recording_id)" : "");
		pg_exec(pg, sql, "schema");
	}
	pg_exec(pg, "ALTER TABLE comms ADD COLUMN IF NOT EXISTS has_calls boolean", "schema");
	pg_exec(pg, VIEWS, "views");
	if (failed(pg)) {
		PQclear(PQexec(pg->conn, "ROLLBACK"));
		return -1;
	}
	if (pg_exec(pg, "COMMIT", "schema"))
		return -1;
	PGresult *r = PQexec(pg->conn, "SELECT c.relname FROM pg_class c WHERE c.relkind = 'p'"
			     " AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())");
	if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return pg_fail(pg, "schema", MAIN_MSG(pg));
	}
	for (int k = 0; k < PQntuples(r); k++)
		for (size_t i = 0; i < NR_TABLES; i++)
			if (TABLES[i].grows && !strcmp(PQgetvalue(r, k, 0), TABLES[i].name))
				pg->parted[TABLES[i].t] = 1;
	PQclear(r);
	return 0;
}

/*
 * The recording's row, after removing an earlier load of it (@force; its
 * partitions go at the end) or refusing to. 0, -1, or -2 refused.
 */
static int add_recording(struct rb_pg *pg, const struct rb_pg_recording *rec, int force)
{
	char size[32], old[32];
	snprintf(size, sizeof(size), "%" PRIu64, rec->size);
	const char *key[] = { rec->hash, size };
	/* read committed whatever the server's default: the streams' rows, committed later, are read after the attach */
	if (pg_exec(pg, "BEGIN ISOLATION LEVEL READ COMMITTED", "begin"))
		return -1;
	pg->in_tx = 1;
	if (pg_value(pg, "SELECT id FROM recordings WHERE header_hash = $1 AND size = $2 FOR UPDATE", 2, key, old,
		     sizeof(old), "recordings"))
		return -1;
	if (old[0] && !force) {
		snprintf(pg->err, sizeof(pg->err), "postgresql: this recording (header hash %s, %s bytes) is already"
			 " loaded as recording %s (use --force to replace it)", rec->hash, size, old);
		pg->failed = 1;
		return -2;
	}
	if (old[0]) {
		const char *p[] = { old };
		pg->old_id = strtoll(old, NULL, 10);
		for (size_t i = 0; i < NR_TABLES && !failed(pg); i++) {
			char sql[128];
			if (pg->parted[TABLES[i].t])
				continue;
			snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE recording_id = $1", TABLES[i].name);
			pg_value(pg, sql, 1, p, NULL, 0, TABLES[i].name);
		}
		pg_value(pg, "DELETE FROM recordings WHERE id = $1", 1, p, NULL, 0, "recordings");
	}
	char when[32] = "";
	if (rec->recorded)
		snprintf(when, sizeof(when), "%" PRId64, rec->recorded);
	const char *v[] = { rec->host, rec->path, rec->hash, size, rec->perf_version, rec->arch,
			    when[0] ? when : NULL, PACKAGE_VERSION };
	char id[32];
	PGresult *r = PQexecParams(pg->conn, "INSERT INTO recordings (host_name, path, header_hash, size, perf_version,"
				   " arch, recorded_at, rbdecode_version) VALUES ($1, $2, $3, $4, $5, $6,"
				   " to_timestamp($7::bigint), $8) RETURNING id", 8, NULL, v, NULL, NULL, 0);
	int ok = r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
	if (ok)
		snprintf(id, sizeof(id), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	if (!ok || failed(pg))
		return pg_fail(pg, "recordings", MAIN_MSG(pg));
	pg->recording_id = strtoll(id, NULL, 10);
	return 0;
}

/* A plain samples table (a database from before partitioning): its rows go on the main connection as they come. */
static int start_live(struct rb_pg *pg)
{
	const struct pg_table *t = table_of(RB_T_SAMPLE);
	if (pg->parted[RB_T_SAMPLE])
		return 0;
	if (copy_start(pg->conn, t, t->name, pg->msg, sizeof(pg->msg)))
		return pg_fail(pg, t->name, pg->msg);
	pg->live = 1;
	return 0;
}

/*
 * Tables of loads that did not finish (samples_r<id>... never attached,
 * their loader's lock free: it was killed, or lost its server), dropped on
 * @c, a connection outside the load's transaction. Best effort: what
 * cannot be dropped now waits for the next load.
 */
static void drop_orphans(struct rb_pg *pg, PGconn *c)
{
	char re[512];
	size_t o = (size_t)snprintf(re, sizeof(re), "^(");
	for (size_t i = 0, n = 0; i < NR_TABLES && o < sizeof(re); i++)
		if (TABLES[i].grows)
			o += (size_t)snprintf(re + o, sizeof(re) - o, "%s%s", n++ ? "|" : "", TABLES[i].name);
	if (o >= sizeof(re) - 16)
		return;
	snprintf(re + o, sizeof(re) - o, ")_r[0-9]+$");
	const char *p[] = { re };
	PGresult *r = PQexecParams(c, "SELECT c.relname, substring(c.relname from '_r([0-9]+)$') FROM pg_class c"
				   " WHERE c.relkind = 'r' AND NOT c.relispartition"
				   " AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
				   " AND c.relname ~ $1",
				   1, NULL, p, NULL, NULL, 0);
	if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return;
	}
	PQclear(PQexec(c, "SET lock_timeout = '2s'"));
	for (int k = 0; k < PQntuples(r); k++) {
		const char *id[] = { PQgetvalue(r, k, 1) };
		char got[8] = "";
		if (strtoll(id[0], NULL, 10) == pg->recording_id ||
		    conn_value(c, "SELECT pg_try_advisory_lock(" STREAM_LOCK ", ($1::bigint % 2147483647)::int)", 1, id,
			       got, sizeof(got)) || strcmp(got, "t"))
			continue;
		/*
		 * Its loader is gone, but it may have committed after the list was
		 * read (its lock goes only after its commit): then the table is a
		 * partition now, and stays.
		 */
		const char *name[] = { PQgetvalue(r, k, 0) };
		char loose[8] = "";
		if (!conn_value(c, "SELECT NOT c.relispartition FROM pg_class c WHERE c.relname = $1 AND c.relnamespace ="
			       " (SELECT oid FROM pg_namespace WHERE nspname = current_schema())", 1, name, loose,
			       sizeof(loose)) && !strcmp(loose, "t")) {
			char sql[160];
			snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name[0]);
			PQclear(PQexec(c, sql));
		}
		conn_value(c, "SELECT pg_advisory_unlock(" STREAM_LOCK ", ($1::bigint % 2147483647)::int)", 1, id, NULL, 0);
	}
	PQclear(PQexec(c, "RESET lock_timeout"));
	PQclear(r);
}

/*
 * @n streams for the partitioned tables: the load's advisory lock (its
 * tables are alive while it is held), old loads' tables dropped, the
 * load's own tables made (committed, so that every stream sees them), and
 * a transaction opened on each stream, whose thread then waits for rows.
 */
static int open_streams(struct rb_pg *pg, const char *conninfo, int n)
{
	int any = 0;
	for (int t = 0; t < RB_T_COUNT; t++)
		any |= pg->parted[t];
	if (!any)
		return 0;
	char id[32];
	snprintf(id, sizeof(id), "%" PRId64, pg->recording_id);
	const char *p[] = { id };
	if (pg_value(pg, "SELECT pg_advisory_lock(" STREAM_LOCK ", ($1::bigint % 2147483647)::int)", 1, p, NULL, 0,
		     "lock"))
		return -1;
	if (!(pg->st = calloc((size_t)n, sizeof(*pg->st))))
		return pg_fail(pg, "streams", "out of memory");
	pg->nr_st = n;
	for (int i = 0; i < n; i++) {
		struct stream *s = &pg->st[i];
		s->pg = pg;
		s->open_t = -1;
		if (!(s->conn = pg_connect(conninfo, s->msg, sizeof(s->msg)))) {
			if (i == 0)
				return pg_fail(pg, "stream", s->msg + strlen("postgresql: "));
			pg->nr_st = i;      /* the server takes no more connections (max_connections): these do */
			break;
		}
	}
	n = pg->nr_st;
	PGconn *c0 = pg->st[0].conn;
	drop_orphans(pg, c0);
	pg->staged = 1;
	for (size_t i = 0; i < NR_TABLES; i++) {
		if (!pg->parted[TABLES[i].t])
			continue;
		char own[128], sql[512];
		staged_name(&TABLES[i], pg->recording_id, own, sizeof(own));
		snprintf(sql, sizeof(sql), "CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS, CHECK (recording_id = %" PRId64 "))",
			 own, TABLES[i].name, pg->recording_id);
		PGresult *r = PQexec(c0, sql);
		int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
		PQclear(r);
		if (!ok)
			return pg_fail(pg, TABLES[i].name, server_msg(c0, pg->st[0].msg, sizeof(pg->st[0].msg)));
	}
	for (int i = 0; i < n; i++) {
		struct stream *s = &pg->st[i];
		PGresult *r = PQexec(s->conn, "BEGIN");
		int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
		PQclear(r);
		if (!ok)
			return pg_fail(pg, "begin", server_msg(s->conn, s->msg, sizeof(s->msg)));
		s->in_tx = 1;
		if (pthread_create(&s->th, NULL, stream_main, s))
			return pg_fail(pg, "streams", "cannot start a thread");
		s->th_started = 1;
	}
	return 0;
}

int rb_pg_open(const struct rb_table_writer **out, const char *conninfo, const struct rb_pg_recording *rec,
	       int force, int streams, int64_t *recording_id, char *msg, size_t msglen)
{
	*out = NULL;
	struct rb_pg *pg = calloc(1, sizeof(*pg));
	if (!pg) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&pg->mu, NULL);
	pthread_cond_init(&pg->cv, NULL);
	if (!(pg->conn = pg_connect(conninfo, msg, msglen))) {
		pg_free(pg);
		return -1;
	}
	int rc = create_schema(pg);
	if (!rc)
		rc = add_recording(pg, rec, force);
	if (!rc)
		rc = open_streams(pg, conninfo, streams < 1 ? 1 : streams);
	if (!rc)
		rc = start_live(pg);
	if (rc) {
		snprintf(msg, msglen, "%s", pg->err);
		pg_free(pg);
		return rc == -2 ? -2 : -1;
	}
	pg->w = (struct rb_table_writer){ .ctx = pg, .row = pg_row, .finish = pg_finish, .abort = pg_free,
					  .error = pg_error };
	if (recording_id)
		*recording_id = pg->recording_id;
	*out = &pg->w;
	return 0;
}
