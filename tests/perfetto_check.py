#!/usr/bin/env python3
"""perfetto_check.py - the independent side of tests/perfetto.test.

  json FILE        parses FILE (Chrome Trace Event Format), checks the
                   structure of every event, that each thread's B/E slices
                   nest and never go back in time, that X slices on a CPU's
                   track do not overlap; prints what it counted:
                   'calls N', 'calls NAME N' per function, 'gaps N',
                   'cpu_slices N', 'counters N', 'ftrace N', 'samples N',
                   'threads N' (named by metadata), and 'slice CPU START END TID'
                   per CPU slice (ns; to match with the database's switches)
  sql DB           the same counts from an rbdecode export: calls per
                   function (calls table), gaps with a time, IMC counters,
                   ftrace events; 'switch CPU TIME TID' per switch that puts
                   a thread (not the idle task) on a CPU
  switches A B     A from json, B from sql: every CPU slice starts at a
                   switch that put its thread on that CPU, and every such
                   switch lies in a slice of its thread on that CPU (a
                   CPU-wide switch out names the next thread before that
                   thread's own switch in); prints the counts
"""
import json
import sqlite3
import sys
from collections import defaultdict

PHASES = {"B", "E", "X", "i", "C", "M"}
CPUS, LOSSES, COUNTERS = 1000000000, 1100000000, 1200000000


def ns(ts):
    return round(ts * 1000)


def check(path):
    with open(path) as f:
        d = json.load(f)
    assert d.get("displayTimeUnit") == "ns"
    ev = d["traceEvents"]
    stacks = defaultdict(list)
    last = {}
    calls = defaultdict(int)
    counts = defaultdict(int)
    cpu_slices = defaultdict(list)
    named = set()
    for e in ev:
        ph = e["ph"]
        assert ph in PHASES, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if ph != "M":
            assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        key = (e["pid"], e["tid"])
        if ph == "B":
            assert isinstance(e["name"], str) and e["name"], e
            assert e["pid"] < CPUS
            assert ns(e["ts"]) >= last.get(key, 0), "time goes back in %s at %s" % (key, e["ts"])
            last[key] = ns(e["ts"])
            stacks[key].append(e["name"])
            calls[e["name"]] += 1
        elif ph == "E":
            assert stacks[key], "E without B in %s at %s" % (key, e["ts"])
            assert ns(e["ts"]) >= last.get(key, 0), "time goes back in %s at %s" % (key, e["ts"])
            last[key] = ns(e["ts"])
            stacks[key].pop()
        elif ph == "X":
            assert e["dur"] >= 0 and isinstance(e["name"], str), e
            if e["cat"] == "gap":
                assert e["pid"] == LOSSES and e["name"].startswith("[trace lost: "), e
                counts["gaps"] += 1
            else:
                assert e["cat"] == "sched" and e["pid"] == CPUS, e
                cpu = e["tid"] - CPUS - 1
                cpu_slices[cpu].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["args"]["tid"]))
                counts["cpu_slices"] += 1
        elif ph == "C":
            assert e["pid"] == COUNTERS and isinstance(e["args"]["value"], (int, float)), e
            counts["counters"] += 1
        elif ph == "i":
            assert e["s"] == "t" and e["name"], e
            counts["ftrace" if e["cat"] == "ftrace" else "samples"] += 1
            if e["cat"] == "sample":
                assert e["args"]["stack"].split(";")[-1] == e["name"], e
        elif ph == "M":
            assert e["name"] in ("process_name", "thread_name") and isinstance(e["args"]["name"], str), e
            if e["name"] == "thread_name" and e["pid"] < CPUS:
                named.add(key)
    for k, s in stacks.items():
        assert not s, "slices left open in %s: %s" % (k, s)
    for k in stacks:
        assert k in named, "thread %s has no name" % (k,)
    for cpu, sl in cpu_slices.items():
        sl.sort()
        for a, b in zip(sl, sl[1:]):
            assert a[1] <= b[0], "CPU %d: slices overlap: %s %s" % (cpu, a, b)
    print("calls", sum(calls.values()))
    for k in sorted(calls):
        print("calls", k, calls[k])
    for k in ("gaps", "cpu_slices", "counters", "ftrace", "samples"):
        print(k, counts[k])
    print("threads", len(stacks))
    for cpu in sorted(cpu_slices):
        for s in cpu_slices[cpu]:
            print("slice", cpu, s[0], s[1], s[2])


def sql(db):
    c = sqlite3.connect(db)

    def one(q):
        try:
            return c.execute(q).fetchone()[0]
        except sqlite3.OperationalError:
            return 0
    rows = c.execute("""
        SELECT CASE WHEN p.symbol_id = 0 OR s.name IS NULL OR s.name = 'unknown' THEN '[unknown]' ELSE s.name END,
               count(*)
        FROM calls JOIN call_paths p ON p.id = calls.call_path_id LEFT JOIN symbols s ON s.id = p.symbol_id
        WHERE calls.id > 0 GROUP BY 1""").fetchall()
    print("calls", sum(n for _, n in rows))
    for k, n in sorted(rows):
        print("calls", k, n)
    print("gaps", one("SELECT count(*) FROM gaps WHERE time_start > 0"))
    print("counters", one("SELECT count(*) FROM imc_counters"))
    print("ftrace", one("SELECT count(*) FROM ftrace_events"))
    print("threads", one("SELECT count(DISTINCT thread_id) FROM calls WHERE id > 0"))
    try:
        for cpu, t, tid in c.execute("""
            SELECT cs.cpu, cs.time, t.tid FROM context_switches cs JOIN threads t ON t.id = cs.thread_in_id
            WHERE cs.thread_in_id > 0 AND NOT (t.pid = 0 AND t.tid = 0) ORDER BY 1, 2"""):
            print("switch", cpu, t, tid)
    except sqlite3.OperationalError:
        pass


def switches(a, b):
    sl = [tuple(map(int, l.split()[1:])) for l in open(a) if l.startswith("slice ")]
    sw = [tuple(map(int, l.split()[1:])) for l in open(b) if l.startswith("switch ")]
    starts = set(sw)
    bad = [s for s in sl if (s[0], s[1], s[3]) not in starts]
    for cpu, t, tid in sw:
        if not any(s[0] == cpu and s[3] == tid and s[1] <= t <= s[2] for s in sl):
            bad.append(("switch", cpu, t, tid))
    print("%d slices, %d switches in the database, %d unmatched %s" % (len(sl), len(sw), len(bad), bad[:3]))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "switches":
        switches(sys.argv[2], sys.argv[3])
    else:
        {"json": check, "sql": sql}[sys.argv[1]](sys.argv[2])
