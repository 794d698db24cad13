#!/usr/bin/env python3
"""ftrace_norm.py report < `trace-cmd report -t -R FILE`  |  ftrace_norm.py db OUT.db
Prints one line per ftrace event, "CPU TIME_NS PID NAME", followed for
sched_switch by its fields as "k=v ..." (trace-cmd's raw -R format), so that
trace-cmd's reading of a trace.dat and rbdecode's database compare with diff.
'DROPPED CPU N' lines count the missed-event markers trace-cmd prints."""
import json, re, sqlite3, sys

LINE = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\S+):\s*(.*)$')
DROP = re.compile(r'^CPU:(\d+) \[(\d+) EVENTS DROPPED\]')

def report():
    for line in sys.stdin:
        m = DROP.match(line)
        if m:
            print("DROPPED CPU %s %s" % (m.group(1), m.group(2)))
            continue
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, sec, ns, name, rest = m.groups()
        t = int(sec) * 1000000000 + int(ns)
        out = "%d %d %s %s" % (int(cpu), t, pid, name)
        if name == "sched_switch":
            out += " " + " ".join(rest.split())
        print(out)

def db(path):
    con = sqlite3.connect(path)
    for cpu, t, pid, name, fields in con.execute(
            "SELECT cpu, time, pid, name, fields FROM ftrace_events ORDER BY id"):
        out = "%d %d %d %s" % (cpu, t, pid, name)
        if name == "sched_switch":
            f = json.loads(fields)
            out += " " + " ".join("%s=%s" % (k, v) for k, v in f.items())
        print(out)

if __name__ == "__main__":
    if sys.argv[1] == "report":
        report()
    else:
        db(sys.argv[2])
