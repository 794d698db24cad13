#!/bin/sh
# scale.sh - SQL over decoded traces at trace sizes: the measures of the
# scale work, on traces this script synthesizes (ptgen large: the loops
# fixture's verified run repeated, each repetition in a new thread, as a
# program that starts short-lived threads; one queue, and 4 CPUs), each
# beside its reference in the same run, the way a user runs them (wall time,
# output to a file, peak memory from the kernel's max RSS):
#  - the quick pass (rbdecode FILE -o DB --quick: index, gaps, AUX buffers
#    from the packets alone) against the default export of the same trace;
#  - default export (rbdecode FILE -o DB): wall time against the bare libipt
#    block-decoder loop over the same bytes (pt_bare.c, the limit; one-queue
#    traces, each side the fastest of three runs, as the machine's speed
#    drifts), database
#    size against the trace's, peak memory as the trace grows 4x;
#  - script: peak memory against perf script --itrace=b's on the same trace,
#    and as the trace grows 4x (the AUX data is spooled and windows are
#    bounded, so it should not grow);
#  - the materialized path (--itrace=b --calls, -j 2: a row per branch and
#    per call, as perf's export writes them) on a SMALL_MB/4 trace against
#    bare_insert.c, a bare SQLite insert loop of the same rows into the same
#    tables and indexes (the limit: SQLite's one writer; with -j 2 the
#    decoding runs beside it);
#  - the rbtrace extension on the large one-queue trace's default database:
#    a whole-trace count and a 1 ms window against the bare libipt loop;
#  - what the database gives without a row per branch: call_path_stats,
#    branch_edges and trace_index rows against the trace's branches;
#    "call paths per call" says how far a trace's call tree is from its list
#    of calls (near 1: almost every call is a new path, and the aggregate is
#    as large as the calls it sums).
# The same export measures, without targets, on ptgen large's default trace
# too: one thread that never returns from its entry point re-enters it at
# each repetition, so each run nests in the one before and the call tree is
# as deep as the trace is long (perf's export makes the same call paths). No
# program has such a tree; on it the database, the export's memory (the
# call-path map and call_path_stats: about 80 bytes a path) and the time
# spent writing paths grow with the trace, as the tree does.
# Prints one line per measure and the ratio with its target. Not a test: run
# it by hand (it takes minutes and the machine's load moves the times).
#
#   scripts/bench/scale.sh [BUILD_DIR] [SMALL_MB]     (SMALL_MB, default 16: the traces are
#                                                     SMALL_MB and 4 x SMALL_MB)
set -eu
B=${1:-$(dirname "$0")/../..}
MB=${2:-16}
S=$(cd "$(dirname "$0")/../.." && pwd)
FX=$S/tests/fixtures/intel-pt-gen
PTGEN=${PTGEN:-$B/scripts/ptgen/ptgen}
RBDECODE=$B/rbdecode
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbscale.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ -x "$PTGEN" ] || { echo "scale.sh: no ptgen at $PTGEN (build the tree first)"; exit 1; }
cc -O2 -o "$WORK/pt_bare" "$S/scripts/bench/pt_bare.c" -lipt
cc -O2 -o "$WORK/bare_insert" "$S/scripts/bench/bare_insert.c" -lsqlite3
text=$(readelf -lW "$FX/rbfix/loops" | awk '$1 == "LOAD" && / R E / { print $3, $2, $5; exit }')

python3 - "$RBDECODE" "$WORK" "$FX" "$text" "$PTGEN" "$MB" "$S/scripts/bench" "$B/rbtrace" <<'PY'
import os, sqlite3, subprocess, sys
rb, work, fx, text, ptgen, mb = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5], int(sys.argv[6])
loops, flow = os.path.join(fx, "rbfix/loops"), os.path.join(fx, "flows/loops.flow")

def timed(cmd, out=os.devnull):
    """wall seconds and peak RSS (MB) of one run, its output written to @out"""
    r = os.path.join(work, "time")
    with open(out, "wb") as f:
        subprocess.run(["/usr/bin/time", "-o", r, "-f", "%e %M"] + cmd, stdout=f, stderr=subprocess.DEVNULL)
    wall, kb = open(r).read().split()[-2:]
    return float(wall), int(kb) / 1024.0

def fastest(cmd, n=3):
    """the fastest of @n runs (wall, peak): the limit a reference run sets, less the machine's drift
    (on a shared VM the same run's wall time has moved 1.7x from one minute to the next)"""
    return min(timed(cmd) for _ in range(n))

def aux_bytes(data, dst):
    subprocess.run(["python3", os.path.join(sys.argv[7], "aux_bytes.py"), data, dst], check=True)

def line(what, value, ref, target):
    print("%-58s %s   ratio %.2f (target %s)" % (what, value, ref, target))

peaks = {}
T = "threads"     # the measured traces' variant; "" is the nesting one (no targets)
for size, cpus, thr in ((mb, "1", T), (4 * mb, "1", T), (4 * mb, "4", T), (mb, "1", ""), (4 * mb, "1", "")):
    data = os.path.join(work, "pt-%d-%s%s.data" % (size, cpus, thr))
    subprocess.run([ptgen, "large", loops, flow, str(size), data, cpus] + ([thr] if thr else []),
                   stdout=subprocess.DEVNULL, check=True)
    tsize = os.path.getsize(data)
    name = "%d MB, %s queue%s%s" % (size, cpus, "" if cpus == "1" else "s", "" if thr else ", nesting")
    tgt = (lambda t: t) if thr else (lambda t: "-")
    db = os.path.join(work, "x.db")
    if os.path.exists(db):
        os.unlink(db)
    # the export as its reference is timed: the fastest of three, each into a new database
    wall, peak = min(timed(["sh", "-c", 'rm -f "$1" && shift && exec "$@"', "sh", db, rb, data, "--symfs", fx, "-q", "-o", db])
                     for _ in range(3 if cpus == "1" else 1))
    dbsize = os.path.getsize(db)
    con = sqlite3.connect(db)
    q = lambda sql: con.execute(sql).fetchone()[0]
    branches = q("SELECT value FROM decode_stats WHERE name = 'branch_samples_from_trace'")   # no row each by default
    agg = q("SELECT count(*) FROM call_path_stats") + q("SELECT count(*) FROM branch_edges") + q("SELECT count(*) FROM trace_index")
    paths, calls = q("SELECT count(*) FROM call_paths"), q("SELECT sum(calls) FROM call_path_stats")
    con.close()
    os.unlink(db)
    if cpus == "1":
        aux_bytes(data, os.path.join(work, "trace.bin"))
        bwall, _ = fastest([os.path.join(work, "pt_bare"), os.path.join(work, "trace.bin"), loops] + text)
        line("%s: default export, wall" % name, "%.1f s (bare libipt %.1f s)" % (wall, bwall), wall / bwall, tgt("<= 2"))
    else:
        line("%s: default export, wall" % name, "%.1f s" % wall, 1.0, "-")
    line("%s: database size" % name, "%.0f MB (trace %.0f MB)" % (dbsize / 1e6, tsize / 1e6), dbsize / tsize, tgt("<= 1"))
    qwall, qpeak = timed([rb, data, "--symfs", fx, "-q", "--quick", "-o", db])
    os.unlink(db)
    line("%s: quick pass (--quick), wall" % name, "%.1f s, %.0f MB (default export %.1f s)" % (qwall, qpeak, wall),
         qwall / wall, tgt("<= 0.2"))
    peaks[(size, cpus, thr)] = peak
    line("%s: peak memory of the export" % name, "%.0f MB" % peak, peak / 256.0, tgt("<= 1 of 256 MB"))
    line("%s: aggregate + index rows per branch" % name, "%d rows for %d branches" % (agg, branches),
         agg / max(branches, 1), tgt("grows with the program"))
    line("%s: call paths per call" % name, "%d call paths for %d calls" % (paths, calls or 0),
         paths / max(calls or 0, 1), "-")
for thr, what, target in ((T, "one queue", "<= 1.2"), ("", "nesting", "-")):
    a, b = peaks[(mb, "1", thr)], peaks[(4 * mb, "1", thr)]
    line("export peak memory as the trace grows 4x (%s)" % what, "%.0f -> %.0f MB" % (a, b), b / a, target)

# script's peak memory against perf script's, on the small one-queue trace
data = os.path.join(work, "pt-%d-1%s.data" % (mb, T))
wall, peak = timed([rb, "script", "--symfs", fx, data], os.path.join(work, "rb.txt"))
pwall, ppeak = timed(["perf", "script", "-i", data, "--itrace=b", "--symfs", fx], os.path.join(work, "perf.txt"))
line("%d MB: script peak memory" % mb, "%.0f MB (perf script %.0f MB)" % (peak, ppeak), peak / ppeak, "<= 2")
line("%d MB: script wall" % mb, "%.1f s (perf script %.1f s)" % (wall, pwall), wall / pwall, "-")
os.unlink(os.path.join(work, "rb.txt"))
os.unlink(os.path.join(work, "perf.txt"))
wall4, peak4 = timed([rb, "script", "--symfs", fx, os.path.join(work, "pt-%d-1%s.data" % (4 * mb, T))])
# perf script's on the larger trace: what the recording's growth costs a reader that keeps every
# thread (a thread per run: the 4x trace has 4x the threads)
_, ppeak4 = timed(["perf", "script", "-i", os.path.join(work, "pt-%d-1%s.data" % (4 * mb, T)), "--itrace=b", "--symfs", fx])

# the rbtrace extension on the large one-queue trace's default database (the issue's 64 MB at the
# default size): the whole trace, and a 1 ms window in its middle, against the bare libipt loop
# over the same bytes
data = os.path.join(work, "pt-%d-1%s.data" % (4 * mb, T))
db = os.path.join(work, "lazy.db")
subprocess.run([rb, data, "--symfs", fx, "-q", "-o", db], check=True)
con = sqlite3.connect(db)
t0, t1 = con.execute("SELECT min(time), max(time) FROM trace_index").fetchone()
con.close()
aux_bytes(data, os.path.join(work, "trace.bin"))
bwall, _ = fastest([os.path.join(work, "pt_bare"), os.path.join(work, "trace.bin"), loops] + text)
ext = sys.argv[8]
awall, apeak = timed(["sqlite3", db, ".load " + ext, "SELECT count(*) FROM branches"])
line("%d MB: SELECT count(*) FROM branches (extension)" % (4 * mb), "%.1f s, %.0f MB (bare libipt %.1f s)" % (awall, apeak, bwall),
     awall / bwall, "<= 1.5")
mid = (t0 + t1) // 2
wwall, wpeak = timed(["sqlite3", db, ".load " + ext,
                      "SELECT count(*) FROM branches WHERE time BETWEEN %d AND %d" % (mid, mid + 1000000)])
line("%d MB: a 1 ms window in the middle (extension)" % (4 * mb), "%.2f s, %.0f MB (whole trace %.1f s)" % (wwall, wpeak, awall),
     wwall / awall, "<= 0.05 and <= 0.5 s")

# the materialized path against the bare insert loop of the same rows
size = max(1, mb // 4)
data = os.path.join(work, "pt-%d-1%s.data" % (size, T))
subprocess.run([ptgen, "large", loops, flow, str(size), data, "1", T], stdout=subprocess.DEVNULL, check=True)
db = os.path.join(work, "rows.db")
if os.path.exists(db):
    os.unlink(db)
mwall, mpeak = timed([rb, data, "--symfs", fx, "--itrace=b", "--calls", "-j", "2", "-q", "-o", db])
n_all, _, t = subprocess.run([os.path.join(work, "bare_insert"), db], check=True, capture_output=True,
                             text=True).stdout.split()
line("%d MB: --itrace=b --calls -j 2 export, wall" % size,
     "%.1f s, %s rows, %.0f k rows/s (bare insert loop %.1f s)" % (mwall, n_all, int(n_all) / mwall / 1e3, float(t)),
     mwall / float(t), "<= 1.3")
os.unlink(db)
line("script peak memory as the trace grows 4x", "%.0f -> %.0f MB (%.1f s -> %.1f s; perf script %.0f -> %.0f MB)"
     % (peak, peak4, wall, wall4, ppeak, ppeak4), peak4 / peak, "<= 1.2")
PY
