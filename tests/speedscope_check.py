#!/usr/bin/env python3
"""speedscope_check.py - the independent side of tests/speedscope.test.

  schema SCHEMA FILE        FILE validates against speedscope's JSON schema
  evented FILE              replays every evented profile (opens and closes
                            must nest, times must not go back) and prints
                            'calls N', 'gaps N' and per frame 'self NAME NS':
                            the time the frame was innermost, loss frames
                            transparent (their time counts for the frame
                            under them, as the calls table's durations do)
  evented-sql DB            the same lines from the calls table of an
                            rbdecode export (the oracle), gaps from its
                            gaps table (those with a time)
  sampled FILE              per frame name 'count NAME N' (samples whose
                            stack holds it) and 'weight NAME W', 'samples N'
  sampled-perf SCRIPT       the same from `perf script -F comm,tid,period,ip,sym`
                            text (perf is the oracle)
"""
import json
import re
import sqlite3
import sys
from collections import defaultdict

LOST = "[trace lost: "


def schema(schema_path, path):
    import jsonschema
    with open(schema_path) as f:
        s = json.load(f)
    with open(path) as f:
        d = json.load(f)
    jsonschema.validate(d, s)
    print("valid", len(d["profiles"]), "profiles")


def evented(path):
    with open(path) as f:
        d = json.load(f)
    names = [fr["name"] for fr in d["shared"]["frames"]]
    self_t = defaultdict(int)
    calls = gaps = 0
    for p in d["profiles"]:
        assert p["type"] == "evented", p["name"]
        stack, last = [], None
        for e in p["events"]:
            at = e["at"]
            if last is not None:
                assert at >= last, "%s: time goes back at %d" % (p["name"], at)
                real = [f for f in stack if not names[f].startswith(LOST)]
                if real:
                    self_t[names[real[-1]]] += at - last
            last = at
            if e["type"] == "O":
                stack.append(e["frame"])
                if names[e["frame"]].startswith(LOST):
                    gaps += 1
                else:
                    calls += 1
            else:
                assert stack and stack[-1] == e["frame"], "%s: close of %s does not nest at %d" % (
                    p["name"], names[e["frame"]], at)
                stack.pop()
        assert not stack, "%s: frames left open" % p["name"]
        assert p["startValue"] <= p["endValue"]
    out(calls, gaps, self_t)


def out(calls, gaps, self_t):
    print("calls", calls)
    print("gaps", gaps)
    for k in sorted(self_t):
        if self_t[k]:
            print("self", k, self_t[k])


def evented_sql(db, column):
    c = sqlite3.connect(db)
    name = """CASE WHEN c.symbol_id = 0 OR s.name IS NULL OR s.name = 'unknown' THEN '[unknown]' ELSE s.name END"""
    w = column
    rows = c.execute("""
        WITH k AS (SELECT parent_id AS id, sum(%s) AS ch FROM calls WHERE id > 0 GROUP BY parent_id)
        SELECT %s, sum((%s) - coalesce(k.ch, 0))
        FROM calls JOIN call_paths c ON c.id = calls.call_path_id LEFT JOIN symbols s ON s.id = c.symbol_id
        LEFT JOIN k ON k.id = calls.id WHERE calls.id > 0 GROUP BY 1""" % (w, name, w)).fetchall()
    self_t = {n: v for n, v in rows}
    calls = c.execute("SELECT count(*) FROM calls WHERE id > 0").fetchone()[0]
    gaps = c.execute("SELECT count(*) FROM gaps WHERE time_start > 0").fetchone()[0]
    out(calls, gaps, self_t)


def sampled(path):
    with open(path) as f:
        d = json.load(f)
    names = [fr["name"] for fr in d["shared"]["frames"]]
    count, weight, n = defaultdict(int), defaultdict(int), 0
    for p in d["profiles"]:
        assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"])
        assert p["endValue"] == sum(p["weights"])
        for s, w in zip(p["samples"], p["weights"]):
            n += 1
            for name in set(names[f] for f in s):
                count[name] += 1
                weight[name] += w
    print_sampled(n, count, weight)


def print_sampled(n, count, weight):
    print("samples", n)
    for k in sorted(count):
        print("count", k, count[k])
        print("weight", k, weight[k])


def sampled_perf(path):
    count, weight, n = defaultdict(int), defaultdict(int), 0
    head = re.compile(r"^\S.*?\s+\d+\s+(\d+)\s*$")
    frame = re.compile(r"^\s+[0-9a-f]+\s+(.*?)(\+0x[0-9a-f]+)?(\s+\((.*)\))?$")
    with open(path) as f:
        blocks = f.read().split("\n\n")
    for b in blocks:
        lines = [l for l in b.split("\n") if l.strip()]
        if not lines:
            continue
        m = head.match(lines[0])
        if not m or len(lines) < 2:
            continue        # no call chain: speedscope files have none of these
        n += 1
        w = int(m.group(1))
        stack = set()
        for l in lines[1:]:
            fm = frame.match(l)
            assert fm, l
            stack.add(fm.group(1).replace(";", ":") if fm.group(1) != "[unknown]" else "[unknown]")
        for name in stack:
            count[name] += 1
            weight[name] += w
    print_sampled(n, count, weight)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "schema":
        schema(sys.argv[2], sys.argv[3])
    elif cmd == "evented":
        evented(sys.argv[2])
    elif cmd == "evented-sql":
        evented_sql(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "max(return_time - call_time, 0)")
    elif cmd == "sampled":
        sampled(sys.argv[2])
    elif cmd == "sampled-perf":
        sampled_perf(sys.argv[2])
    else:
        sys.exit("unknown command " + cmd)
