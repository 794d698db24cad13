#!/bin/sh
# coresight.sh - CoreSight decoding speed against the reference tools:
#  1. `rbdecode elements` against `trc_pkt_lister -decode` on the OpenCSD
#     snapshot with the largest trace buffer (both decode every packet into
#     generic elements and print them);
#  2. `rbdecode script` against `perf script --itrace=b` on the cs_etm
#     recording perf_etm.data (both decode the AUX trace into perf-clock
#     branch samples), when perf here links OpenCSD.
# The inputs are small, so each command runs REPEAT times; prints the median
# wall time per run and the ratio reference / rbdecode (above 1: rbdecode is
# faster). Target: a ratio of at least 1.
#
#   scripts/bench/coresight.sh [RBDECODE] [REPEAT]
set -eu
RBDECODE=${1:-$(dirname "$0")/../../rbdecode}
REPEAT=${2:-20}
FIX=${RB_FIXTURES:-$(dirname "$0")/../../../shared/fixtures}
SNAP=$FIX/opencsd-snapshots
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# the snapshot whose trace buffers (file= in trace.ini) are the largest
best= best_size=0
for ini in "$SNAP"/*/*/trace.ini; do
	d=${ini%/trace.ini}
	size=0
	for f in $(sed -n 's/^file=//p' "$ini"); do
		[ -f "$d/$f" ] && size=$((size + $(stat -c %s "$d/$f")))
	done
	if [ "$size" -gt "$best_size" ]; then best=$d best_size=$size; fi
done
[ -n "$best" ] || { echo "no snapshots under $SNAP" >&2; exit 1; }
echo "snapshot: $best ($best_size bytes of trace)"

SYM=$WORK/symfs
mkdir -p "$SYM/data/local/tmp"
cp "$FIX/coresight-perf/etm_test_loop" "$SYM/data/local/tmp/"

python3 - "$RBDECODE" "$best" "$FIX/coresight-perf/perf_etm.data" "$SYM" "$REPEAT" "$WORK" <<'PY'
import os, statistics, subprocess, sys, time
rb, snap, etm, sym, repeat, work = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
def median_wall(cmd, cwd=None, logfile=None):
    times, out = [], b""
    for _ in range(repeat):
        if logfile and os.path.exists(logfile):
            os.unlink(logfile)      # trc_pkt_lister appends to its log
        t = time.perf_counter()
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd).stdout
        times.append(time.perf_counter() - t)
    if logfile:
        out = open(logfile, "rb").read()
    return statistics.median(times), out
def compare(title, ref_name, ref_cmd, rb_cmd, count, ref_log=None):
    tr, ref_out = median_wall(ref_cmd, cwd=work, logfile=ref_log)
    tb, rb_out = median_wall(rb_cmd)
    print(f"{title}")
    print(f"  {ref_name:<16} {tr * 1000:8.2f} ms  {count(ref_out)} lines")
    print(f"  {'rbdecode':<16} {tb * 1000:8.2f} ms  {count(rb_out)} lines")
    print(f"  ratio {ref_name} / rbdecode: {tr / tb:.2f}")
lines = lambda out: len(out.splitlines())
log = work + "/tpl.log"
compare("elements of " + snap, "trc_pkt_lister",
        ["trc_pkt_lister", "-ss_dir", snap, "-decode", "-logfilename", log],
        [rb, "elements", snap], lambda out: len([l for l in out.splitlines() if l.startswith(b"Idx:")]), log)
probe = subprocess.run(["perf", "script", "-i", etm, "--symfs", sym, "--itrace=b"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
if probe:
    compare("branches of " + etm, "perf script",
            ["perf", "script", "-i", etm, "--symfs", sym, "--itrace=b"],
            [rb, "script", "--symfs", sym, etm], lines)
else:
    print("perf here cannot decode cs_etm: no perf comparison")
PY
