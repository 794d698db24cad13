#!/bin/sh
# postgresql.sh - rows per second into PostgreSQL: rbdecode -o postgresql://
# against perf's export-to-postgresql.py on the same recording (made here
# once: cpu-clock with call graphs, system-wide, while shell loops spin; or
# INPUT=perf.data), and against a bare binary COPY of the same rows (the
# rows rbdecode loaded, dumped with COPY ... TO (FORMAT binary) and loaded
# again into tables of the same shape, keys and indexes added after, in one
# transaction: what the server can take, the limit). The server is started
# here, as tests/postgresql.test starts it (initdb in a temporary folder, a
# Unix socket only, fsync off, as the postgres user when run as root), and
# every load goes into a fresh database. Each side runs RUNS times and the
# median counts. Targets: >= 10x perf's script, within 1.5x of bare COPY.
#
# Measured here (2 CPUs, otherwise idle, PostgreSQL 15, fsync off, RUNS=3):
#  - a 13 MB system-wide cpu-clock -g recording, 173k rows: rbdecode 0.93 s
#    (-j 1), 1.16x the bare COPY; -j 2 0.99 s, 1.10x the bare COPY over 2
#    connections; 2.0x perf's script;
#  - a 1 MB ptgen Intel PT trace with --itrace=b --calls, 1.04 M rows:
#    3.73 s (-j 1), 1.22x the bare COPY; -j 2 4.05 s, 1.31x; 2.1x perf's.
# The server is the limit: a bare binary COPY of the same rows, keys and
# indexes after, takes 214k rows/s (samples) and 340k rows/s (trace rows)
# over one connection and no more over two (0.89x, 0.99x): on 2 CPUs its
# backends share the cores with each other and with the decoding, so
# several streams pay where the server has cores to spare. perf's script
# already feeds it 86k-120k rows/s, so no loader reaches 10x perf's script
# on this server.
#
#   scripts/bench/postgresql.sh [RBDECODE] [SECONDS]
#   RUNS=3, STREAMS=2 (rbdecode -j and the bare COPY's connections, beside one), INPUT=perf.data (instead of recording), RBDECODE_ARGS="--itrace=b --calls ..." and
#   PERF_OPTS="--itrace=be --symfs DIR" for a hardware trace (the same rows on both sides)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
RBDECODE=${1:-$here/../../rbdecode}
SECS=${2:-4}
RUNS=${RUNS:-3}
STREAMS=${STREAMS:-2}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
EXPORT=/usr/lib/perf-core/scripts/python/export-to-postgresql.py
[ -x "$PGBIN/initdb" ] || { echo "PostgreSQL 15 is not installed (Debian postgresql-15)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbpgb.XXXXXX")
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$WORK"
	as_pg() { runuser -u postgres -- "$@"; }
else
	as_pg() { "$@"; }
fi
trap 'as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1; rm -rf "$WORK"' EXIT
(cd / && as_pg "$PGBIN/initdb" -D "$WORK/data" -A trust -U postgres -E UTF8 --no-locale >/dev/null)
as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/log" -w -o "-c listen_addresses='' -k $WORK -c fsync=off" start >/dev/null
PSQL="psql -X -q -v ON_ERROR_STOP=1 -h $WORK -U postgres"
export PGHOST=$WORK PGUSER=postgres

IN=$WORK/in.data
if [ -n "${INPUT:-}" ]; then
	cp "$INPUT" "$IN"
else
	perf record -q -a -g -e cpu-clock -c 50000 -o "$IN" -- sh -c '
		spin() { i=0; while :; do i=$((i+1)); done; }
		spin & a=$!; spin & b=$!; sleep '"$SECS"'; kill $a $b' >/dev/null 2>&1
fi
chmod a+r "$IN"
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# the tables, partitions left out (their rows are their parent's)
TOP="table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'recordings'
	AND table_name NOT IN (SELECT relname FROM pg_class WHERE relispartition)"
rows_in() {   # rows_in DB: every row of every table (for ours, one recording), the unknown rows 0 included
	$PSQL -A -t -d "$1" -c "SELECT string_agg('SELECT count(*) FROM ' || quote_ident(table_name), ' UNION ALL ')
		FROM information_schema.tables WHERE $TOP" | { read -r sql; $PSQL -A -t -d "$1" -c "SELECT sum(count) FROM ($sql) t"; }
}
n=0
fresh() { n=$((n + 1)); db=b$n; $PSQL -d postgres -c "CREATE DATABASE $db"; }   # sets db

echo "recording: $(stat -c %s "$IN") bytes; $RUNS runs each; server: PostgreSQL $($PGBIN/postgres --version | awk '{ print $3 }'), fsync off, $(nproc) CPUs"
# ours J: rbdecode -j J, RUNS times into fresh databases; sets ours_t (the median) and ours_db
ours() {
	: >"$WORK/ours.t"
	for i in $(seq "$RUNS"); do
		fresh
		t0=$(now)
		# shellcheck disable=SC2086
		"$RBDECODE" "$IN" ${RBDECODE_ARGS:-} -j "$1" -q -o "postgresql://postgres@/$db?host=$WORK"
		echo "$(now) - $t0" | bc >>"$WORK/ours.t"
	done
	ours_db=b$n
	ours_t=$(median <"$WORK/ours.t")
}
ours 1
ours1_t=$ours_t
ours "$STREAMS"
oursn_t=$ours_t
ours_rows=$(rows_in "$ours_db")

# bare: the same rows as binary COPY files, into plain tables of the same shape, over K connections
# at once (each its own transaction, each table's rows split K ways), then the keys and indexes
tables=$($PSQL -A -t -d "$ours_db" -c "SELECT string_agg(table_name, ' ') FROM information_schema.tables WHERE $TOP")
for t in $tables; do
	$PSQL -A -t -d "$ours_db" -c "SELECT 'CREATE TABLE $t (' || string_agg(quote_ident(column_name) || ' ' ||
		data_type, ', ' ORDER BY ordinal_position) || ');' FROM information_schema.columns WHERE table_name = '$t'"
done >"$WORK/schema.sql"
{
	for t in $tables; do
		k=$($PSQL -A -t -d "$ours_db" -c "SELECT string_agg(a.attname, ', ' ORDER BY array_position(c.conkey, a.attnum))
			FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
			WHERE c.conrelid = '$t'::regclass AND c.contype = 'p'")
		[ -n "$k" ] && echo "ALTER TABLE $t ADD PRIMARY KEY ($k);"
	done
	$PSQL -A -t -d "$ours_db" -c "SELECT indexdef || ';' FROM pg_indexes WHERE schemaname = 'public'
		AND indexname NOT LIKE '%_pkey' AND tablename <> 'recordings'
		AND tablename NOT IN (SELECT relname FROM pg_class WHERE relispartition)"
} >"$WORK/keys.sql"
# bare K: sets bare_t (the median)
bare() {
	K=$1
	for t in $tables; do
		for k in $(seq 0 $((K - 1))); do
			$PSQL -d "$ours_db" -c "\\copy (SELECT * FROM $t x WHERE abs(hashtext(x::text)) % $K = $k) TO '$WORK/$t.$k.bin' WITH (FORMAT binary)"
		done
	done
	: >"$WORK/bare.t"
	for i in $(seq "$RUNS"); do
		fresh
		$PSQL -d "$db" -f "$WORK/schema.sql"
		t0=$(now)
		for k in $(seq 0 $((K - 1))); do
			{
				echo "BEGIN;"
				for t in $tables; do printf '%s\n' "\\copy $t FROM '$WORK/$t.$k.bin' WITH (FORMAT binary)"; done
				echo "COMMIT;"
			} | $PSQL -d "$db" &
		done
		wait
		$PSQL -d "$db" -f "$WORK/keys.sql"
		echo "$(now) - $t0" | bc >>"$WORK/bare.t"
		got=$(rows_in "$db")
		[ "$got" = "$ours_rows" ] || { echo "the bare COPY loaded $got rows, not $ours_rows"; exit 1; }
	done
	bare_t=$(median <"$WORK/bare.t")
}
bare 1
bare1_t=$bare_t
bare "$STREAMS"
baren_t=$bare_t

perf_line="perf's export-to-postgresql.py: not run"
if [ -f "$EXPORT" ] && /usr/bin/python3 -c 'from PySide2.QtSql import QSqlDatabase as D; exit(not D.isDriverAvailable("QPSQL"))' 2>/dev/null; then
	: >"$WORK/perf.t"
	for i in $(seq "$RUNS"); do
		n=$((n + 1))
		t0=$(now)
		# shellcheck disable=SC2086
		(cd "$WORK" && PATH=/usr/bin:$PATH perf script -i "$IN" ${PERF_OPTS:-} -s "$EXPORT" "b$n" all calls callchains \
			>/dev/null 2>&1)
		echo "$(now) - $t0" | bc >>"$WORK/perf.t"
	done
	perf_rows=$(rows_in "b$n")
	perf_t=$(median <"$WORK/perf.t")
	perf_line=$(echo "$perf_rows $perf_t $ours_rows $oursn_t" | awk '{ p = $1 / $2; o = $3 / $4;
		printf "perf'"'"'s export-to-postgresql.py: %d rows in %.2f s, %.0f rows/s; rbdecode is %.1fx faster (target >= 10x)", $1, $2, p, o / p }')
else
	perf_line="perf's export-to-postgresql.py: not run (needs linux-perf, python3-pyside2.qtsql, libqt5sql5-psql)"
fi
for j in 1 "$STREAMS"; do
	if [ "$j" = 1 ]; then o=$ours1_t b=$bare1_t; else o=$oursn_t b=$baren_t; fi
	echo "$ours_rows $o $b $j" | awk '{ printf "-j %d: rbdecode -o postgresql:// %d rows in %.2f s, %.0f rows/s (decoding included); bare binary COPY over %d connection(s), keys and indexes after: %.2f s, %.0f rows/s; rbdecode takes %.2fx its time (target <= 1.5x)\n", $4, $1, $2, $1 / $2, $4, $3, $1 / $3, $2 / $3 }'
done
echo "$ours_rows $bare1_t $baren_t $STREAMS" | awk '{ printf "the server'"'"'s limit: %.0f rows/s over 1 connection, %.0f rows/s over %d (%.2fx)\n", $1 / $2, $1 / $3, $4, $2 / $3 }'
echo "$perf_line"
