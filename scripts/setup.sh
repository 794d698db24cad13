#!/bin/sh
# setup.sh - everything on a fresh Debian 12 machine: install what is missing,
# build, and run the main job on real recordings: record with rbrecord, decode
# into SQLite and query it; then the Intel PT and CoreSight fixtures when
# ../shared/fixtures is present.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure -q
make -j"$(nproc)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== rbrecord: a recording made now"
if ./rbrecord -e cpu-clock -c 100000 -o "$tmp/perf.data" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; ls / >/dev/null'; then
	echo "== rbdecode info"
	./rbdecode info --stats "$tmp/perf.data"
	echo "== rbdecode into SQLite, then the top functions (doc/queries.sql)"
	./rbdecode "$tmp/perf.data" -o "$tmp/perf.db"
	sqlite3 -header -column "$tmp/perf.db" "SELECT symbol, dso_short_name, count(*) AS samples FROM samples_view
		WHERE id > 0 GROUP BY symbol, dso_short_name ORDER BY samples DESC LIMIT 10"
else
	echo "rbrecord cannot open events here (see /proc/sys/kernel/perf_event_paranoid)"
fi
fixtures=${RB_FIXTURES:-$top/../shared/fixtures}
for f in "$fixtures/intel-pt/perf.data.piped.intel_pt-4.14" "$fixtures/coresight-perf/perf_etm.data"; do
	[ -f "$f" ] || continue
	echo "== rbdecode info $f"
	./rbdecode info "$f"
done
snap="$fixtures/opencsd-snapshots/etm/juno_r1_1"
if [ -d "$snap" ]; then
	echo "== rbdecode elements $snap (first lines)"
	./rbdecode elements "$snap" | head -n 12
fi
