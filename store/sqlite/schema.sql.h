/*
 * schema.sql.h - the database schema as SQL text, included by store.c.
 * Tables and views named and shaped as perf's export-to-sqlite.py makes them
 * (so perf's queries and exported-sql-viewer.py work unchanged), then the
 * tables perf lacks. Indexes come after the load (INDEXES).
 */
static const char SCHEMA[] =
	"CREATE TABLE selected_events (id integer NOT NULL PRIMARY KEY, name varchar(80));"
	"CREATE TABLE machines (id integer NOT NULL PRIMARY KEY, pid integer, root_dir varchar(4096));"
	"CREATE TABLE threads (id integer NOT NULL PRIMARY KEY, machine_id bigint, process_id bigint,"
	" pid integer, tid integer);"
	"CREATE TABLE comms (id integer NOT NULL PRIMARY KEY, comm varchar(16), c_thread_id bigint,"
	" c_time bigint, exec_flag boolean);"
	"CREATE TABLE comm_threads (id integer NOT NULL PRIMARY KEY, comm_id bigint, thread_id bigint);"
	"CREATE TABLE dsos (id integer NOT NULL PRIMARY KEY, machine_id bigint, short_name varchar(256),"
	" long_name varchar(4096), build_id varchar(64));"
	"CREATE TABLE symbols (id integer NOT NULL PRIMARY KEY, dso_id bigint, sym_start bigint,"
	" sym_end bigint, binding integer, name varchar(2048));"
	"CREATE TABLE branch_types (id integer NOT NULL PRIMARY KEY, name varchar(80));"
	"CREATE TABLE samples (id integer NOT NULL PRIMARY KEY, evsel_id bigint, machine_id bigint,"
	" thread_id bigint, comm_id bigint, dso_id bigint, symbol_id bigint, sym_offset bigint, ip bigint,"
	" time bigint, cpu integer, to_dso_id bigint, to_symbol_id bigint, to_sym_offset bigint,"
	" to_ip bigint, period bigint, weight bigint, transaction_ bigint, data_src bigint,"
	" branch_type integer, in_tx boolean, call_path_id bigint, insn_count bigint, cyc_count bigint,"
	" flags integer);"
	"CREATE TABLE call_paths (id integer NOT NULL PRIMARY KEY, parent_id bigint, symbol_id bigint,"
	" ip bigint);"
	"CREATE TABLE calls (id integer NOT NULL PRIMARY KEY, thread_id bigint, comm_id bigint,"
	" call_path_id bigint, call_time bigint, return_time bigint, branch_count bigint, call_id bigint,"
	" return_id bigint, parent_call_path_id bigint, flags integer, parent_id bigint,"
	" insn_count bigint, cyc_count bigint);"
	"CREATE TABLE ptwrite (id integer NOT NULL PRIMARY KEY, payload bigint, exact_ip integer);"
	"CREATE TABLE cbr (id integer NOT NULL PRIMARY KEY, cbr integer, mhz integer, percent integer);"
	"CREATE TABLE mwait (id integer NOT NULL PRIMARY KEY, hints integer, extensions integer);"
	"CREATE TABLE pwre (id integer NOT NULL PRIMARY KEY, cstate integer, subcstate integer, hw integer);"
	"CREATE TABLE exstop (id integer NOT NULL PRIMARY KEY, exact_ip integer);"
	"CREATE TABLE pwrx (id integer NOT NULL PRIMARY KEY, deepest_cstate integer, last_cstate integer,"
	" wake_reason integer);"
	"CREATE TABLE context_switches (id integer NOT NULL PRIMARY KEY, machine_id bigint, time bigint,"
	" cpu integer, thread_out_id bigint, comm_out_id bigint, thread_in_id bigint, comm_in_id bigint,"
	" flags integer);"

	/* what perf lacks */
	"CREATE TABLE gaps (id integer NOT NULL PRIMARY KEY, time_start bigint, time_end bigint,"
	" cpu integer, pid integer, tid integer, source varchar(32), reason varchar(64),"
	" bytes_lost bigint, records_lost bigint, file_offset bigint, detail varchar(256));"
	"CREATE TABLE aux_buffers (id integer NOT NULL PRIMARY KEY, queue integer, cpu integer,"
	" tid integer, aux_offset bigint, size bigint, file_offset bigint, snapshot_nr integer,"
	" reference bigint);"
	"CREATE TABLE imc_records (id integer NOT NULL PRIMARY KEY, time bigint, time_estimated boolean,"
	" cpu integer, pid integer, tid integer, ip bigint, privilege integer, period bigint,"
	" timebase bigint, cpmc1 bigint, cpmc2 bigint, cpmc3 bigint, cpmc4 bigint,"
	" flush_time bigint, evsel_id bigint);"
	"CREATE TABLE imc_counters (id integer NOT NULL PRIMARY KEY, time bigint, cpu integer, tid integer,"
	" evsel_id bigint, pmu varchar(64), source varchar(8), value bigint, enabled bigint, running bigint);"
	"CREATE TABLE decode_stats (name varchar(64) NOT NULL PRIMARY KEY, value);"
	/* the ftrace ring (a trace.dat): one row per event, its own fields as a JSON object */
	"CREATE TABLE ftrace_events (id integer NOT NULL PRIMARY KEY, time bigint, cpu integer, pid integer,"
	" comm varchar(16), system varchar(64), name varchar(64), flags integer, preempt_count integer,"
	" fields text, info text, file_offset bigint);"
	"CREATE VIEW ftrace_fields AS SELECT e.id AS event_id, e.name AS event, f.key AS field, f.value AS value"
	" FROM ftrace_events e, json_each(e.fields) f;"
	/* both rings on one clock: perf samples and ftrace events in time order */
	"CREATE VIEW timeline AS SELECT time, cpu, 'perf' AS source,"
	" (SELECT name FROM selected_events WHERE id = evsel_id) AS event,"
	" (SELECT pid FROM threads WHERE id = thread_id) AS pid, id FROM samples WHERE id > 0"
	" UNION ALL SELECT time, cpu, 'ftrace', system || ':' || name, pid, id FROM ftrace_events"
	" ORDER BY time;"

	/* perf's views */
	"CREATE VIEW machines_view AS SELECT id, pid, root_dir,"
	" CASE WHEN id=0 THEN 'unknown' WHEN pid=-1 THEN 'host' ELSE 'guest' END AS host_or_guest"
	" FROM machines;"
	"CREATE VIEW dsos_view AS SELECT id, machine_id,"
	" (SELECT host_or_guest FROM machines_view WHERE id = machine_id) AS host_or_guest,"
	" short_name, long_name, build_id FROM dsos;"
	"CREATE VIEW symbols_view AS SELECT id, name, (SELECT short_name FROM dsos WHERE id=dso_id) AS dso,"
	" dso_id, sym_start, sym_end,"
	" CASE WHEN binding=0 THEN 'local' WHEN binding=1 THEN 'global' ELSE 'weak' END AS binding"
	" FROM symbols;"
	"CREATE VIEW threads_view AS SELECT id, machine_id,"
	" (SELECT host_or_guest FROM machines_view WHERE id = machine_id) AS host_or_guest,"
	" process_id, pid, tid FROM threads;"
	"CREATE VIEW comm_threads_view AS SELECT comm_id,"
	" (SELECT comm FROM comms WHERE id = comm_id) AS command, thread_id,"
	" (SELECT pid FROM threads WHERE id = thread_id) AS pid,"
	" (SELECT tid FROM threads WHERE id = thread_id) AS tid FROM comm_threads;"
	"CREATE VIEW call_paths_view AS SELECT c.id, printf(\"%x\", c.ip) AS ip, c.symbol_id,"
	" (SELECT name FROM symbols WHERE id = c.symbol_id) AS symbol,"
	" (SELECT dso_id FROM symbols WHERE id = c.symbol_id) AS dso_id,"
	" (SELECT dso FROM symbols_view WHERE id = c.symbol_id) AS dso_short_name,"
	" c.parent_id, printf(\"%x\", p.ip) AS parent_ip, p.symbol_id AS parent_symbol_id,"
	" (SELECT name FROM symbols WHERE id = p.symbol_id) AS parent_symbol,"
	" (SELECT dso_id FROM symbols WHERE id = p.symbol_id) AS parent_dso_id,"
	" (SELECT dso FROM symbols_view WHERE id = p.symbol_id) AS parent_dso_short_name"
	" FROM call_paths c INNER JOIN call_paths p ON p.id = c.parent_id;"
	"CREATE VIEW calls_view AS SELECT calls.id, thread_id,"
	" (SELECT pid FROM threads WHERE id = thread_id) AS pid,"
	" (SELECT tid FROM threads WHERE id = thread_id) AS tid,"
	" (SELECT comm FROM comms WHERE id = comm_id) AS command, call_path_id,"
	" printf(\"%x\", ip) AS ip, symbol_id, (SELECT name FROM symbols WHERE id = symbol_id) AS symbol,"
	" call_time, return_time, return_time - call_time AS elapsed_time, branch_count, insn_count,"
	" cyc_count,"
	" CASE WHEN cyc_count=0 THEN CAST(0 AS FLOAT) ELSE ROUND(CAST(insn_count AS FLOAT) / cyc_count, 2) END AS IPC,"
	" call_id, return_id,"
	" CASE WHEN flags=0 THEN '' WHEN flags=1 THEN 'no call' WHEN flags=2 THEN 'no return'"
	" WHEN flags=3 THEN 'no call/return' WHEN flags=6 THEN 'jump' ELSE flags END AS flags,"
	" parent_call_path_id, calls.parent_id"
	" FROM calls INNER JOIN call_paths ON call_paths.id = call_path_id;"
	"CREATE VIEW samples_view AS SELECT id, time, cpu,"
	" (SELECT pid FROM threads WHERE id = thread_id) AS pid,"
	" (SELECT tid FROM threads WHERE id = thread_id) AS tid,"
	" (SELECT comm FROM comms WHERE id = comm_id) AS command,"
	" (SELECT name FROM selected_events WHERE id = evsel_id) AS event,"
	" printf(\"%x\", ip) AS ip_hex, (SELECT name FROM symbols WHERE id = symbol_id) AS symbol,"
	" sym_offset, (SELECT short_name FROM dsos WHERE id = dso_id) AS dso_short_name,"
	" printf(\"%x\", to_ip) AS to_ip_hex, (SELECT name FROM symbols WHERE id = to_symbol_id) AS to_symbol,"
	" to_sym_offset, (SELECT short_name FROM dsos WHERE id = to_dso_id) AS to_dso_short_name,"
	" (SELECT name FROM branch_types WHERE id = branch_type) AS branch_type_name, in_tx,"
	" insn_count, cyc_count,"
	" CASE WHEN cyc_count=0 THEN CAST(0 AS FLOAT) ELSE ROUND(CAST(insn_count AS FLOAT) / cyc_count, 2) END AS IPC,"
	" flags FROM samples;"
	"CREATE VIEW ptwrite_view AS SELECT ptwrite.id, time, cpu, printf(\"%x\", payload) AS payload_hex,"
	" CASE WHEN exact_ip=0 THEN 'False' ELSE 'True' END AS exact_ip"
	" FROM ptwrite INNER JOIN samples ON samples.id = ptwrite.id;"
	"CREATE VIEW cbr_view AS SELECT cbr.id, time, cpu, cbr, mhz, percent"
	" FROM cbr INNER JOIN samples ON samples.id = cbr.id;"
	"CREATE VIEW mwait_view AS SELECT mwait.id, time, cpu, printf(\"%x\", hints) AS hints_hex,"
	" printf(\"%x\", extensions) AS extensions_hex FROM mwait INNER JOIN samples ON samples.id = mwait.id;"
	"CREATE VIEW pwre_view AS SELECT pwre.id, time, cpu, cstate, subcstate,"
	" CASE WHEN hw=0 THEN 'False' ELSE 'True' END AS hw FROM pwre INNER JOIN samples ON samples.id = pwre.id;"
	"CREATE VIEW exstop_view AS SELECT exstop.id, time, cpu,"
	" CASE WHEN exact_ip=0 THEN 'False' ELSE 'True' END AS exact_ip"
	" FROM exstop INNER JOIN samples ON samples.id = exstop.id;"
	"CREATE VIEW pwrx_view AS SELECT pwrx.id, time, cpu, deepest_cstate, last_cstate,"
	" CASE WHEN wake_reason=1 THEN 'Interrupt' WHEN wake_reason=2 THEN 'Timer Deadline'"
	" WHEN wake_reason=4 THEN 'Monitored Address' WHEN wake_reason=8 THEN 'HW' ELSE wake_reason END AS wake_reason"
	" FROM pwrx INNER JOIN samples ON samples.id = pwrx.id;"
	"CREATE VIEW power_events_view AS SELECT samples.id, time, cpu, selected_events.name AS event,"
	" CASE WHEN selected_events.name='cbr' THEN (SELECT cbr FROM cbr WHERE cbr.id = samples.id) ELSE \"\" END AS cbr,"
	" CASE WHEN selected_events.name='cbr' THEN (SELECT mhz FROM cbr WHERE cbr.id = samples.id) ELSE \"\" END AS mhz,"
	" CASE WHEN selected_events.name='cbr' THEN (SELECT percent FROM cbr WHERE cbr.id = samples.id) ELSE \"\" END AS percent,"
	" CASE WHEN selected_events.name='mwait' THEN (SELECT printf(\"%x\", hints) FROM mwait WHERE mwait.id = samples.id) ELSE \"\" END AS hints_hex,"
	" CASE WHEN selected_events.name='mwait' THEN (SELECT printf(\"%x\", extensions) FROM mwait WHERE mwait.id = samples.id) ELSE \"\" END AS extensions_hex,"
	" CASE WHEN selected_events.name='pwre' THEN (SELECT cstate FROM pwre WHERE pwre.id = samples.id) ELSE \"\" END AS cstate,"
	" CASE WHEN selected_events.name='pwre' THEN (SELECT subcstate FROM pwre WHERE pwre.id = samples.id) ELSE \"\" END AS subcstate,"
	" CASE WHEN selected_events.name='pwre' THEN (SELECT hw FROM pwre WHERE pwre.id = samples.id) ELSE \"\" END AS hw,"
	" CASE WHEN selected_events.name='exstop' THEN (SELECT exact_ip FROM exstop WHERE exstop.id = samples.id) ELSE \"\" END AS exact_ip,"
	" CASE WHEN selected_events.name='pwrx' THEN (SELECT deepest_cstate FROM pwrx WHERE pwrx.id = samples.id) ELSE \"\" END AS deepest_cstate,"
	" CASE WHEN selected_events.name='pwrx' THEN (SELECT last_cstate FROM pwrx WHERE pwrx.id = samples.id) ELSE \"\" END AS last_cstate,"
	" CASE WHEN selected_events.name='pwrx' THEN (SELECT CASE WHEN wake_reason=1 THEN 'Interrupt'"
	" WHEN wake_reason=2 THEN 'Timer Deadline' WHEN wake_reason=4 THEN 'Monitored Address'"
	" WHEN wake_reason=8 THEN 'HW' ELSE wake_reason END FROM pwrx WHERE pwrx.id = samples.id) ELSE \"\" END AS wake_reason"
	" FROM samples INNER JOIN selected_events ON selected_events.id = evsel_id"
	" WHERE selected_events.name IN ('cbr','mwait','exstop','pwre','pwrx');"
	"CREATE VIEW context_switches_view AS SELECT context_switches.id, context_switches.machine_id,"
	" context_switches.time, context_switches.cpu, th_out.pid AS pid_out, th_out.tid AS tid_out,"
	" comm_out.comm AS comm_out, th_in.pid AS pid_in, th_in.tid AS tid_in, comm_in.comm AS comm_in,"
	" CASE WHEN context_switches.flags = 0 THEN 'in' WHEN context_switches.flags = 1 THEN 'out'"
	" WHEN context_switches.flags = 3 THEN 'out preempt' ELSE context_switches.flags END AS flags"
	" FROM context_switches"
	" INNER JOIN threads AS th_out ON th_out.id = context_switches.thread_out_id"
	" INNER JOIN threads AS th_in ON th_in.id = context_switches.thread_in_id"
	" INNER JOIN comms AS comm_out ON comm_out.id = context_switches.comm_out_id"
	" INNER JOIN comms AS comm_in ON comm_in.id = context_switches.comm_in_id;"
	/* ours: how complete is the trace */
	"CREATE VIEW gaps_view AS SELECT id, time_start, time_end, time_end - time_start AS duration,"
	" cpu, pid, tid, source, reason, bytes_lost, records_lost, file_offset, detail FROM gaps;"
	/* hardware trace: where decoding can start in each queue (an Intel PT PSB) */
	"CREATE TABLE trace_index (id integer NOT NULL PRIMARY KEY, source varchar(16), queue integer,"
	" cpu integer, tid integer, time bigint, aux_pos bigint, file_offset bigint, ip bigint);"
	/* hardware trace: where the rbtrace extension starts a window's decoding (rb_seek_ev, session.h) */
	"CREATE TABLE trace_seek (id integer NOT NULL PRIMARY KEY, source varchar(16), queue integer, cpu integer,"
	" time bigint, tsc bigint, pos bigint, aux_pos bigint, start_off bigint, start_ord integer,"
	" start_from bigint, start_to bigint, start_flags integer, sample_seq bigint);"
	/* hardware trace, aggregated while loading: grows with the program, not with the trace */
	"CREATE TABLE call_path_stats (call_path_id integer NOT NULL PRIMARY KEY, calls bigint,"
	" total_time bigint, self_time bigint, branch_count bigint, insn_count bigint, cyc_count bigint);"
	"CREATE TABLE branch_edges (id integer NOT NULL PRIMARY KEY, from_dso_id bigint,"
	" from_symbol_id bigint, from_sym_offset bigint, from_ip bigint, to_dso_id bigint,"
	" to_symbol_id bigint, to_sym_offset bigint, to_ip bigint, branch_type integer, count bigint);"
	"CREATE VIEW function_stats AS SELECT p.symbol_id, s.name, d.short_name AS dso, sum(t.calls) AS calls,"
	" sum(t.self_time) AS self_time, sum(t.total_time) AS total_time_all_levels,"
	" sum(t.branch_count) AS branch_count, sum(t.insn_count) AS insn_count, sum(t.cyc_count) AS cyc_count"
	" FROM call_path_stats t JOIN call_paths p ON p.id = t.call_path_id"
	" LEFT JOIN symbols s ON s.id = p.symbol_id LEFT JOIN dsos d ON d.id = s.dso_id GROUP BY p.symbol_id;"
	"CREATE VIEW branch_edges_view AS SELECT e.id, printf(\"%x\", from_ip) AS from_ip,"
	" (SELECT name FROM symbols WHERE id = from_symbol_id) AS from_symbol, from_sym_offset,"
	" printf(\"%x\", to_ip) AS to_ip, (SELECT name FROM symbols WHERE id = to_symbol_id) AS to_symbol,"
	" to_sym_offset, (SELECT name FROM branch_types WHERE id = branch_type) AS branch_type, count"
	" FROM branch_edges e;";

static const char INDEXES[] =
	"CREATE INDEX samples_time_idx ON samples (time);"
	"CREATE INDEX call_paths_parent_idx ON call_paths (parent_id);";
/* where the calls table is kept (see drop_empty), in INDEXES' order */
static const char CALLS_INDEX[] =
	"CREATE INDEX pcpid_idx ON calls (parent_call_path_id);"
	"CREATE INDEX pid_idx ON calls (parent_id);";
static const char INDEXES2[] =
	"CREATE INDEX gaps_time_idx ON gaps (cpu, time_start);"
	"CREATE INDEX imc_records_time_idx ON imc_records (cpu, time);"
	"CREATE INDEX imc_counters_time_idx ON imc_counters (evsel_id, time);";
static const char FTRACE_INDEX[] = "CREATE INDEX ftrace_events_time_idx ON ftrace_events (time);";
static const char SYNC_INDEX[] = "CREATE INDEX trace_index_time_idx ON trace_index (queue, time);";
static const char SEEK_INDEX[] = "CREATE INDEX trace_seek_time_idx ON trace_seek (queue, time);";
static const char SWITCH_INDEX[] = "CREATE INDEX context_switches_time_idx ON context_switches (cpu, time);";

/* As perf's export-to-sqlite.py does when it exported calls: which comms have calls (the viewer's
 * call graph and call tree list only those). */
#define COMMS_HAS_CALLS_ADD "ALTER TABLE comms ADD has_calls boolean;"
#define COMMS_HAS_CALLS_SET "UPDATE comms SET has_calls = 1 WHERE comms.id IN (SELECT DISTINCT comm_id FROM calls);"

/* perf's branch types: flag combination → name (PERF_IP_FLAG_*: BRANCH 1, CALL 2, RETURN 4,
 * CONDITIONAL 8, SYSCALLRET 16, ASYNC 32, INTERRUPT 64, TX_ABORT 128, TRACE_BEGIN 256,
 * TRACE_END 512, VMENTRY 2048, VMEXIT 4096). The trace begin / end variants are derived. */
static const struct { unsigned type; const char *name; } BRANCH_TYPES[] = {
	{ 0, "no branch" }, { 3, "call" }, { 5, "return" }, { 9, "conditional jump" },
	{ 1, "unconditional jump" }, { 67, "software interrupt" }, { 69, "return from interrupt" },
	{ 19, "system call" }, { 21, "return from system call" }, { 33, "asynchronous branch" },
	{ 99, "hardware interrupt" }, { 129, "transaction abort" }, { 257, "trace begin" },
	{ 513, "trace end" }, { 2051, "vm entry" }, { 4099, "vm exit" },
};
