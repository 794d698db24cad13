#!/usr/bin/env python3
"""dbcompare.py [--rank] [--no-ipc] [--no-cpu] [--symfs=DIR] PERF_DB OURS_DB [TABLE...] - compare two
databases with perf's export-to-sqlite schema by content, through joins on
names and values (ids may differ). Prints one line per table: 'same N' or
'DIFF' with the first differences; exits 1 if any table differs.

Samples are compared with every column (names of thread, comm, event, dso
and symbol of both ends), call paths as chains of symbol names from the
root, calls by thread, comm, call path chain, parent chain, times, counts
and flags, and by the samples that made the call and the return.

--rank   times of samples and calls are replaced by the sample's position
         among its thread's samples of the same event (for traces whose
         decoders date branches differently; see tests/export_pt.test)
--no-ipc insn_count and cyc_count are left out (perf counts them only at
         the branches where a CYC packet makes the cycle count exact)
--no-cpu samples' cpu is left out (a trace recorded per thread has no CPU:
         perf gives the CPU its sideband last saw the thread on, we -1)
--symfs=DIR  where perf has no build-id for an object, the one in the ELF
         file under DIR stands in for it (perf reads build-ids from the
         recording, or from a file at the recorded path, not under --symfs)
The pseudo-table 'ipc' checks the explained form instead: perf's
instruction count at each of its IPC branches equals the sum of ours since
its previous one, and each of our calls counts the instructions of the
branches between its call and return.
"""
import os, re, sqlite3, subprocess, sys

def chains(db):
    """call path id -> 'sym <- caller <- ...' with dso, or ip when no symbol"""
    names = {}
    try:
        for i, n, d in db.execute("SELECT s.id, s.name, d.short_name FROM symbols s LEFT JOIN dsos d ON d.id = s.dso_id"):
            names[i] = "%s(%s)" % (n, d)
        paths = {i: (p, s, ip) for i, p, s, ip in db.execute("SELECT id, parent_id, symbol_id, ip FROM call_paths")}
    except sqlite3.Error:
        return {}
    memo = {}
    def chain(i):
        # iterative: call paths may be thousands deep
        todo, j = [], i
        while j and j in paths and j not in memo:
            todo.append(j)
            j = paths[j][0]
        tail = memo.get(j, "")
        for k in reversed(todo):
            p, s, ip = paths[k]
            if p == 0 and s == 0 and ip == 0:
                memo[k] = ""
            else:
                me = names.get(s, "?") if s else "%x" % ip
                memo[k] = me + (" <- " + tail if tail else "")
            tail = memo[k]
        return memo.get(i, "")
    return {i: chain(i) for i in paths}

SAMPLE_COLS = ("{t}, {cpu}, t.pid, t.tid, c.comm, e.name, s.ip, sy.name, s.sym_offset, d.short_name,"
               " s.to_ip, tsy.name, s.to_sym_offset, td.short_name, s.period, s.weight, s.transaction_,"
               " s.data_src, s.branch_type, s.in_tx, chain(s.call_path_id), s.flags{ipc}")
SAMPLE_FROM = (" FROM samples s JOIN threads t ON t.id = s.thread_id LEFT JOIN comms c ON c.id = s.comm_id"
               " JOIN selected_events e ON e.id = s.evsel_id LEFT JOIN symbols sy ON sy.id = s.symbol_id"
               " LEFT JOIN dsos d ON d.id = s.dso_id LEFT JOIN symbols tsy ON tsy.id = s.to_symbol_id"
               " LEFT JOIN dsos td ON td.id = s.to_dso_id WHERE s.id > 0")
RANKS = ("CREATE TEMP TABLE rank AS SELECT id, ROW_NUMBER() OVER (PARTITION BY thread_id, evsel_id ORDER BY id)"
         " AS r FROM samples WHERE id > 0")

def build_id(path):
    """the GNU build-id note of an ELF file, as hex, or '' """
    try:
        out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    except OSError:
        return ""
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else ""

def queries(rank, ipc, cpu):
    t = "(SELECT r FROM rank WHERE rank.id = s.id)" if rank else "s.time"
    ct = ("(SELECT r FROM rank WHERE rank.id = k.call_id), coalesce((SELECT r FROM rank WHERE rank.id = k.return_id), 'end')"
          if rank else "k.call_time, k.return_time")
    ref = ("(SELECT printf('%x>%x', ip, to_ip) FROM samples WHERE id = k.call_id),"
           " (SELECT printf('%x>%x', ip, to_ip) FROM samples WHERE id = k.return_id)")
    return {
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
        "samples": "SELECT " + SAMPLE_COLS.format(t=t, cpu="s.cpu" if cpu else "0", ipc=", s.insn_count, s.cyc_count" if ipc else "") + SAMPLE_FROM,
        "call_paths": "SELECT chain(id) FROM call_paths WHERE id > 0",
        "calls": "SELECT t.pid, t.tid, c.comm, chain(k.call_path_id), chain(k.parent_call_path_id), " + ct +
                 ", " + ref + ", k.branch_count, k.flags" + (", k.insn_count, k.cyc_count" if ipc else "") +
                 " FROM calls k JOIN threads t ON t.id = k.thread_id LEFT JOIN comms c ON c.id = k.comm_id"
                 " WHERE k.id > 0",
        "context_switches": "SELECT time, cpu, pid_out, tid_out, comm_out, pid_in, tid_in, comm_in, flags"
                            " FROM context_switches_view",
    }

def rows(db, q):
    try:
        return sorted((tuple(r) for r in db.execute(q)), key=repr), None
    except sqlite3.Error as e:
        return [], str(e)

def ipc_check(perf, ours):
    """perf's IPC counts against ours (see the docstring); returns (ok, message).
    perf counts per trace queue (CPU, or thread when traced per thread), so
    the branches are paired by their place in their thread, then walked per
    queue in our order (the decoding order)."""
    q = ("SELECT t.tid, s.id, s.cpu, s.insn_count, s.cyc_count FROM samples s JOIN threads t ON t.id = s.thread_id"
         " JOIN selected_events e ON e.id = s.evsel_id WHERE s.id > 0 AND e.name LIKE 'branches%' ORDER BY t.tid, s.id")
    a, b = perf.execute(q).fetchall(), ours.execute(q).fetchall()
    if len(a) != len(b) or any(x[0] != y[0] for x, y in zip(a, b)):
        return False, "branch samples differ: perf %d, ours %d" % (len(a), len(b))
    pairs = sorted(zip(a, b), key=lambda p: ((p[1][2], 0) if p[1][2] >= 0 else (-1, p[1][0]), p[1][1]))
    points, acc, queue = 0, 0, None
    for (_, _, _, ia, ca), (tid, _, cpu, ib, cb) in pairs:
        key = cpu if cpu >= 0 else (-1, tid)
        if key != queue:
            queue, acc = key, 0
        acc += ib
        if cb:
            return False, "ours has cycle counts"
        if ca:
            if ia != acc:
                return False, "perf's IPC branch %d counts %d instructions, ours %d" % (points, ia, acc)
            points, acc = points + 1, 0
    # a call's counts cover the branch_count branches of its thread after the call (or from it, for
    # the entry a thread's first branch puts at the bottom of its stack: pushed before it is counted)
    ours.execute("CREATE TEMP TABLE IF NOT EXISTS trank AS SELECT id, thread_id, insn_count,"
                 " ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY id) AS r FROM samples WHERE id > 0")
    bad = ours.execute("""SELECT count(*) FROM calls k JOIN trank c ON c.id = k.call_id WHERE k.id > 0 AND
        k.insn_count != (SELECT coalesce(sum(s.insn_count), 0) FROM trank s WHERE s.thread_id = k.thread_id
                         AND s.r > c.r AND s.r <= c.r + k.branch_count) AND
        k.insn_count != (SELECT coalesce(sum(s.insn_count), 0) FROM trank s WHERE s.thread_id = k.thread_id
                         AND s.r >= c.r AND s.r < c.r + k.branch_count)""").fetchone()[0]
    if bad:
        return False, "%d calls do not count the instructions between call and return" % bad
    return True, "%d IPC points" % points

def main():
    args = sys.argv[1:]
    rank, ipc, cpu = "--rank" in args, "--no-ipc" not in args, "--no-cpu" not in args
    symfs = [a[8:] for a in args if a.startswith("--symfs=")]
    args = [a for a in args if not a.startswith("--")]
    perf, ours = sqlite3.connect(args[0]), sqlite3.connect(args[1])
    if symfs:
        perf.execute("CREATE TEMP TABLE dsos AS SELECT * FROM main.dsos")
        for i, name in perf.execute("SELECT id, long_name FROM dsos WHERE build_id = ''").fetchall():
            f = os.path.join(symfs[0], name.lstrip("/"))
            if os.path.isfile(f):
                perf.execute("UPDATE temp.dsos SET build_id = ? WHERE id = ?", (build_id(f), i))
    for db in (perf, ours):
        c = chains(db)
        db.create_function("chain", 1, lambda i, c=c: c.get(i, "") if i else "")
        if rank:
            db.execute(RANKS)
    qs = queries(rank, ipc, cpu)
    bad = 0
    for name in args[2:] or qs.keys():
        if name == "ipc":
            good, msg = ipc_check(perf, ours)
            print("%-16s %s %s" % (name, "same" if good else "DIFF", msg))
            bad += not good
            continue
        a, ea = rows(perf, qs[name])
        b, eb = rows(ours, qs[name])
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
        for r in sorted(sa - sb, key=repr)[:5]:
            print("   perf only: %.400s" % (r,))
        for r in sorted(sb - sa, key=repr)[:5]:
            print("   ours only: %.400s" % (r,))
    sys.exit(1 if bad else 0)

main()
