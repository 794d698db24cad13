#!/bin/sh
# sqlite.sh - rows per second into SQLite: rbdecode against perf's
# export-to-sqlite.py on the same recording (made here: cpu-clock with call
# graphs, system-wide, while shell loops spin), and against a bare SQLite
# insert loop of the same sample rows (bare_insert.c: the limit).
# Targets: >= 10x perf's script, within 1.5x of the bare loop.
#
#   scripts/bench/sqlite.sh [RBDECODE] [SECONDS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
RBDECODE=${1:-$here/../../rbdecode}
SECS=${2:-4}
EXPORT=/usr/lib/perf-core/scripts/python/export-to-sqlite.py
[ -f "$EXPORT" ] || { echo "perf's export-to-sqlite.py not found (Debian linux-perf)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbsql.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/bare_insert" "$here/bare_insert.c" -lsqlite3

perf record -q -a -g -e cpu-clock -c 50000 -o "$WORK/in.data" -- sh -c '
	spin() { i=0; while :; do i=$((i+1)); done; }
	spin & a=$!; spin & b=$!; sleep '"$SECS"'; kill $a $b' >/dev/null 2>&1
echo "recording: $(stat -c %s "$WORK/in.data") bytes"

t0=$(date +%s.%N)
perf script -i "$WORK/in.data" -s "$EXPORT" "$WORK/perf.db" all calls callchains >/dev/null 2>&1
t1=$(date +%s.%N)
"$RBDECODE" "$WORK/in.data" -o "$WORK/ours.db" -q
t2=$(date +%s.%N)
bare=$("$WORK/bare_insert" "$WORK/ours.db")

python3 - "$WORK/perf.db" "$WORK/ours.db" "$t0" "$t1" "$t2" "$bare" <<'PY'
import sqlite3, sys
perf_db, ours_db, t0, t1, t2, bare = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:6]), sys.argv[6]
n_perf = sqlite3.connect(perf_db).execute("SELECT count(*) FROM samples WHERE id > 0").fetchone()[0]
n_ours = sqlite3.connect(ours_db).execute("SELECT count(*) FROM samples WHERE id > 0").fetchone()[0]
bare_rows, bare_s = bare.split()
bare_rate = int(bare_rows) / float(bare_s)
perf_rate, ours_rate = n_perf / (t1 - t0), n_ours / (t2 - t1)
print("perf export-to-sqlite.py  %8d sample rows in %6.2f s  %10.0f rows/s" % (n_perf, t1 - t0, perf_rate))
print("rbdecode                  %8d sample rows in %6.2f s  %10.0f rows/s" % (n_ours, t2 - t1, ours_rate))
print("bare insert loop          %8s sample rows in %6.2f s  %10.0f rows/s" % (bare_rows, float(bare_s), bare_rate))
print("ratio rbdecode/perf: %.1fx (target >= 10x); bare/rbdecode: %.2fx (target <= 1.5x)" %
      (ours_rate / perf_rate, bare_rate / ours_rate))
PY
