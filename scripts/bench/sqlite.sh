#!/bin/sh
# sqlite.sh - rows per second into SQLite: rbdecode against perf's
# export-to-sqlite.py on the same recording (made here once: cpu-clock with
# call graphs, system-wide, while shell loops spin), and against a bare
# SQLite insert loop of the same rows (bare_insert.c: the limit; every table
# and index of rbdecode's database, and the samples table alone as before).
# Each side runs several times on that one recording and the median counts
# (the spread is printed too); rbdecode's database is checked to be the same
# on every run (tests/dbcompare.py against the first).
# Targets: >= 10x perf's script, within 1.5x of the bare loop.
#
#   scripts/bench/sqlite.sh [RBDECODE] [SECONDS]
#   RUNS=5 (rbdecode and the bare loop), PERF_RUNS=3, INPUT=perf.data to use
#   instead of recording, KEEP=DIR to keep the recording and databases there
set -eu
here=$(cd "$(dirname "$0")" && pwd)
RBDECODE=${1:-$here/../../rbdecode}
SECS=${2:-4}
RUNS=${RUNS:-5}
PERF_RUNS=${PERF_RUNS:-3}
EXPORT=/usr/lib/perf-core/scripts/python/export-to-sqlite.py
[ -f "$EXPORT" ] || { echo "perf's export-to-sqlite.py not found (Debian linux-perf)"; exit 1; }
if [ -n "${KEEP:-}" ]; then
	WORK=$KEEP
	mkdir -p "$WORK"
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbsql.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
fi
cc -O2 -o "$WORK/bare_insert" "$here/bare_insert.c" -lsqlite3

if [ -n "${INPUT:-}" ]; then
	[ "$INPUT" -ef "$WORK/in.data" ] || cp "$INPUT" "$WORK/in.data"
else
	perf record -q -a -g -e cpu-clock -c 50000 -o "$WORK/in.data" -- sh -c '
		spin() { i=0; while :; do i=$((i+1)); done; }
		spin & a=$!; spin & b=$!; sleep '"$SECS"'; kill $a $b' >/dev/null 2>&1
fi
echo "recording: $(stat -c %s "$WORK/in.data") bytes; $PERF_RUNS runs of perf's script, $RUNS of rbdecode and of the bare loop"

python3 - "$WORK" "$RBDECODE" "$EXPORT" "$RUNS" "$PERF_RUNS" "$here/../../tests/dbcompare.py" <<'PY'
import os, sqlite3, statistics, subprocess, sys, time
work, rbdecode, export, runs, perf_runs, dbcompare = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
data = os.path.join(work, "in.data")
quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def timed(cmd, out, env=None):
    if os.path.exists(out):
        os.unlink(out)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, **quiet)
    return time.perf_counter() - t

def samples(db):
    return sqlite3.connect(db).execute("SELECT count(*) FROM samples WHERE id > 0").fetchone()[0]

perf_db, ours_db = os.path.join(work, "perf.db"), os.path.join(work, "ours.db")
# perf's embedded Python finds its modules (PySide2) through the python3 first on PATH: the system's
system = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
perf_t = [timed(["perf", "script", "-i", data, "-s", export, perf_db, "all", "calls", "callchains"], perf_db, system)
          for _ in range(perf_runs)]
# rbdecode and the bare loops take turns, so that each run of one meets the same load as the other's
ours_t, bare_all, bare_samples = [], [], []
bare = os.path.join(work, "bare_insert")
for i in range(runs):
    out = ours_db if i == 0 else os.path.join(work, "ours%d.db" % i)
    ours_t.append(timed([rbdecode, data, "-o", out, "-q"], out))
    if i:
        # the same database every time
        if subprocess.run(["python3", dbcompare, ours_db, out], **quiet).returncode:
            sys.exit("run %d of rbdecode made a different database" % (i + 1))
        os.unlink(out)
    n_all, _, t = subprocess.run([bare, ours_db], check=True, capture_output=True, text=True).stdout.split()
    bare_all.append(float(t))
    _, n_bare, t = subprocess.run([bare, "--samples", ours_db], check=True, capture_output=True, text=True).stdout.split()
    bare_samples.append(float(t))
n_perf, n_ours, n_bare, n_all = samples(perf_db), samples(ours_db), int(n_bare), int(n_all)

def line(name, n, ts, what="sample rows"):
    m = statistics.median(ts)
    print("%-34s %8d %s, median %6.3f s (%.3f..%.3f)  %10.0f rows/s" % (name, n, what, m, min(ts), max(ts), n / m))
    return m

perf_m = line("perf export-to-sqlite.py", n_perf, perf_t)
ours_m = line("rbdecode", n_ours, ours_t)
all_m = line("bare loop, every table and index", n_all, bare_all, "rows       ")
smp_m = line("bare loop, samples table only", n_bare, bare_samples)
print("rbdecode against perf's script: %.1fx the sample rows per second (target >= 10x)" % ((n_ours / ours_m) / (n_perf / perf_m)))
print("rbdecode's time against the bare loop of the same rows (its %d rows of every table, and the indexes): %.2fx"
      " (target <= 1.5x); against the samples table alone: %.2fx" % (n_all, ours_m / all_m, ours_m / smp_m))
print("per run, rbdecode / bare loop of the same rows: %s" % " ".join("%.2f" % (o / b) for o, b in zip(ours_t, bare_all)))
PY
