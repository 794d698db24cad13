#!/bin/sh
# setup.sh - everything on a fresh Debian 12 machine: install what is missing,
# build, and run the main job on real recordings (a fresh perf recording made
# here, and the Intel PT and CoreSight fixtures when ../shared/fixtures is
# present).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure -q
make -j"$(nproc)"

echo "== rbdecode info on a recording made now (perf record -g, 1 s)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if perf record -q -g -e cpu-clock -o "$tmp/perf.data" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' 2>/dev/null; then
	./rbdecode info "$tmp/perf.data"
else
	echo "perf record cannot open events here (see /proc/sys/kernel/perf_event_paranoid)"
fi
fixtures=${RB_FIXTURES:-$top/../shared/fixtures}
for f in "$fixtures/intel-pt/perf.data.piped.intel_pt-4.14" "$fixtures/coresight-perf/perf_etm.data"; do
	[ -f "$f" ] || continue
	echo "== rbdecode info $f"
	./rbdecode info "$f"
done
