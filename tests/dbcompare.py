#!/usr/bin/env python3
"""dbcompare.py PERF_DB OURS_DB - compare two databases with perf's
export-to-sqlite schema by content, through joins on names (ids may differ).
Prints one line per table: 'same N' or 'DIFF' with the first differences;
exits 1 if any table differs."""
import sqlite3, sys

QUERIES = {
    "selected_events": "SELECT name FROM selected_events WHERE id > 0",
    "machines": "SELECT pid, root_dir FROM machines WHERE id > 0",
    "branch_types": "SELECT id, name FROM branch_types",
    "threads": "SELECT t.pid, t.tid, p.pid, p.tid FROM threads t LEFT JOIN threads p ON p.id = t.process_id"
               " WHERE t.id > 0",
    "comms": "SELECT c.comm, t.pid, t.tid, c.c_time, c.exec_flag FROM comms c"
             " LEFT JOIN threads t ON t.id = c.c_thread_id WHERE c.id > 0",
    "comm_threads": "SELECT command, pid, tid FROM comm_threads_view",
    "dsos": "SELECT short_name, long_name, build_id FROM dsos WHERE id > 0",
    "symbols": "SELECT d.long_name, s.sym_start, s.sym_end, s.binding, s.name FROM symbols s"
               " JOIN dsos d ON d.id = s.dso_id WHERE s.id > 0",
    "samples": "SELECT v.time, v.cpu, v.pid, v.tid, v.command, v.event, v.ip_hex, v.symbol, v.sym_offset,"
               " v.dso_short_name, s.period, s.weight, s.data_src FROM samples_view v"
               " JOIN samples s ON s.id = v.id WHERE v.id > 0",
    "call_paths": """WITH RECURSIVE chain(sid, cp, path) AS (
                       SELECT s.id, s.call_path_id, '' FROM samples s WHERE s.id > 0 AND s.call_path_id > 0
                       UNION ALL
                       SELECT c.sid, p.parent_id,
                              COALESCE((SELECT name FROM symbols WHERE id = p.symbol_id), '?') || '@' ||
                              printf('%x', p.ip) || ' <- ' || c.path
                       FROM chain c JOIN call_paths p ON p.id = c.cp WHERE c.cp > 0)
                     SELECT (SELECT time FROM samples WHERE id = sid), path FROM chain WHERE cp = 0""",
    "context_switches": "SELECT time, cpu, pid_out, tid_out, comm_out, pid_in, tid_in, comm_in, flags"
                        " FROM context_switches_view",
}

def rows(db, q):
    try:
        return sorted(tuple(r) for r in db.execute(q)), None
    except sqlite3.Error as e:
        return [], str(e)

def main():
    perf, ours = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
    bad = 0
    only = sys.argv[3:] or QUERIES.keys()
    for name in only:
        q = QUERIES[name]
        a, ea = rows(perf, q)
        b, eb = rows(ours, q)
        if ea and eb:
            print("%-16s absent in both" % name)
            continue
        if a == b and not ea and not eb:
            print("%-16s same %d" % (name, len(a)))
            continue
        bad += 1
        sa, sb = set(a), set(b)
        print("%-16s DIFF perf %d rows, ours %d rows%s" % (name, len(a), len(b),
              (" (%s)" % (ea or eb)) if (ea or eb) else ""))
        for r in sorted(sa - sb)[:5]:
            print("   perf only: %s" % (r,))
        for r in sorted(sb - sa)[:5]:
            print("   ours only: %s" % (r,))
    sys.exit(1 if bad else 0)

main()
