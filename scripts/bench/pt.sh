#!/bin/sh
# pt.sh - Intel PT decoding speed on a large synthesized trace (ptgen large:
# the loops fixture's verified run repeated, see
# tests/fixtures/intel-pt-gen/README.md), one queue, against
#  - perf script --itrace=b (perf's own decoder, the same branches as text),
#  - a bare libipt block-decoder loop over the same bytes (pt_bare.c: image
#    through the section cache, no sideband, no output): the limit,
#  - perf's export-to-sqlite.py with branches and calls, against rbdecode -o
#    (SQLite; it fills the same tables: samples, calls, call_paths).
#  - -j: a 4-CPU trace of the same size decoded with --jobs 1 and --jobs N
#    (N = the CPUs here, at most 4): wall time and speed-up, output identical;
#    and the one-queue trace the same way (its run decoded in segments);
#  - memory: max RSS of decoding 4-CPU traces of TRACE_MB and 4 x TRACE_MB
#    (AUX data spooled, as recordings of 64 MiB and more are).
# Prints CPU time (user + sys, the least of 5 runs, 9 for the short decode
# runs, the two sides of a ratio in turns: on a shared machine a run only
# ever loses time to others, so the least is the program's own cost; timed
# runs write to /dev/null) and the ratios; checks, in separate
# untimed runs, that both decoders print the same number of branches and that
# -j changes nothing in the output.
#
#   scripts/bench/pt.sh [BUILD_DIR] [TRACE_MB]
set -eu
B=${1:-$(dirname "$0")/../..}
MB=${2:-4}
S=$(cd "$(dirname "$0")/../.." && pwd)
FX=$S/tests/fixtures/intel-pt-gen
PTGEN=${PTGEN:-$B/scripts/ptgen/ptgen}
RBDECODE=$B/rbdecode
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ -x "$PTGEN" ] || { echo "pt.sh: no ptgen at $PTGEN (build the tree first)"; exit 1; }
"$PTGEN" large "$FX/rbfix/loops" "$FX/flows/loops.flow" "$MB" "$WORK/pt.data" 1 >"$WORK/expect"
cat "$WORK/expect"
cc -O2 -o "$WORK/pt_bare" "$S/scripts/bench/pt_bare.c" -lipt

# the queue's AUX bytes, perf's 8-byte padding between chunks dropped
python3 "$S/scripts/bench/aux_bytes.py" "$WORK/pt.data" "$WORK/trace.bin"
echo "trace: $(stat -c %s "$WORK/trace.bin") bytes of Intel PT"
text=$(readelf -lW "$FX/rbfix/loops" | awk '$1 == "LOAD" && / R E / { print $3, $2, $5; exit }')

python3 - "$RBDECODE" "$WORK" "$FX" "$text" "$PTGEN" "$MB" <<'PY'
import os, resource, subprocess, sys, time
rb, work, fx, text = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
data = os.path.join(work, "pt.data")
def run(cmd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
def output(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
def best(cmd, n=5, setup=None):
    rs = []
    for _ in range(n):
        if setup:
            setup()
        rs.append(run(cmd))
    return min(r[1] for r in rs), min(r[0] for r in rs)
perf_cmd = ["perf", "script", "-i", data, "--symfs", fx, "--itrace=b"]
rb_cmd = [rb, "script", "--symfs", fx, data]
bare_cmd = [os.path.join(work, "pt_bare"), os.path.join(work, "trace.bin"), os.path.join(fx, "rbfix/loops"),
            text[0], text[1], text[2]]
perf_out, rb_out, bare_out = output(perf_cmd), output(rb_cmd), output(bare_cmd)
def best_pair(a, b, n=5, wall=False):
    """least CPU (or wall) time of @n runs of each, in turns: both sides meet the same moments of a shared machine"""
    ra, rb_ = [], []
    for _ in range(n):
        ra.append(run(a)[0 if wall else 1])
        rb_.append(run(b)[0 if wall else 1])
    return min(ra), min(rb_)
perf_cpu, rb_cpu = best_pair(perf_cmd, rb_cmd)
dec_cpu, bare_cpu = best_pair([rb, "gaps", "--symfs", fx, data], bare_cmd, n=9)
print("perf script --itrace=b   cpu %.3f s  %d lines" % (perf_cpu, perf_out.count(b"\n")))
print("rbdecode script          cpu %.3f s  %d lines" % (rb_cpu, rb_out.count(b"\n")))
print("rbdecode decode only     cpu %.3f s  (rbdecode gaps: decodes, prints no branch)" % dec_cpu)
print("bare libipt block loop   cpu %.3f s  %s" % (bare_cpu, bare_out.decode().strip()))
print("branches agree: %s" % (perf_out.count(b"\n") == rb_out.count(b"\n")))
print("ratio text perf/rbdecode: %.2fx (target >= 3x)" % (perf_cpu / rb_cpu))
print("ratio decode rbdecode/bare: %.2fx (target <= 1.5x)" % (dec_cpu / bare_cpu))
db = os.path.join(work, "rb.db")
def rm():
    for f in (db, os.path.join(work, "perf.db")):
        if os.path.exists(f):
            os.remove(f)
# the rows perf's export writes (branches, calls): --itrace=b --calls, not the default's aggregates only
rbs_cpu, rbs_wall = best([rb, data, "--symfs", fx, "--itrace=b", "--calls", "-q", "-o", db], n=3, setup=rm)
print("rbdecode -o --itrace=b --calls  cpu %.3f s  wall %.3f s (decoding and SQLite run in two threads)" % (rbs_cpu, rbs_wall))
script = "/usr/lib/perf-core/scripts/python/export-to-sqlite.py"
if not os.path.exists(script):
    script = None
if script and os.environ.get("PT_BENCH_PERF_SQLITE", "1") == "1":
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    rm()
    # the same tables filled: branch samples, and calls with call paths
    t = run(["perf", "script", "-i", data, "--symfs", fx, "--itrace=b", "-s", script,
             os.path.join(work, "perf.db"), "branches", "calls"], env=env)
    print("perf export-to-sqlite    cpu %.3f s  wall %.3f s (one run; branches calls)" % (t[1], t[0]))
    print("ratio SQLite perf/rbdecode: cpu %.2fx, wall %.2fx (target >= 10x)" % (t[1] / rbs_cpu, t[0] / rbs_wall))

# -j on a multi-queue trace, and memory against trace size
import hashlib
jobs = min(4, os.cpu_count() or 1)
ptgen, loops, flow, mb = sys.argv[5], os.path.join(fx, "rbfix/loops"), os.path.join(fx, "flows/loops.flow"), int(sys.argv[6])
multi = os.path.join(work, "pt4.data")
subprocess.run([ptgen, "large", loops, flow, str(mb), multi, "4"], stdout=subprocess.DEVNULL, check=True)
def jobs_lines(label, path, note):
    same = hashlib.sha1(output([rb, "script", "--symfs", fx, "--jobs", "1", path])).digest() == \
        hashlib.sha1(output([rb, "script", "--symfs", fx, "--jobs", str(jobs), path])).digest()
    w1, wn = best_pair([rb, "script", "--symfs", fx, "--jobs", "1", path],
                       [rb, "script", "--symfs", fx, "--jobs", str(jobs), path], wall=True)
    d1, dn = best_pair([rb, "gaps", "--symfs", fx, "--jobs", "1", path],
                       [rb, "gaps", "--symfs", fx, "--jobs", str(jobs), path], n=9, wall=True)
    print("%s script   --jobs 1 %.3f s, --jobs %d %.3f s: %.2fx (output identical: %s)" %
          (label, w1, jobs, wn, w1 / wn, same))
    print("%s decoding --jobs 1 %.3f s, --jobs %d %.3f s: %.2fx on %d CPUs%s" % (label, d1, jobs, dn, d1 / dn, jobs, note))
jobs_lines("4 queues,", multi, "")
jobs_lines("1 queue, ", data, " (segments)")
def maxrss(path, spool):
    env = dict(os.environ, RBDECODE_PT_SPOOL_MIN="0" if spool else "99999999999999")
    cmd = ["/usr/bin/time", "-f", "%M", rb, "gaps", "--symfs", fx, "--jobs", str(jobs), path]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return int(p.stderr.decode().strip().splitlines()[-1])
big = os.path.join(work, "pt4big.data")
subprocess.run([ptgen, "large", loops, flow, str(4 * mb), big, "4"], stdout=subprocess.DEVNULL, check=True)
for spool in (True, False):
    a, b = maxrss(multi, spool), maxrss(big, spool)
    print("max RSS decoding %s: %d MB trace %d KB, %d MB trace %d KB (x%.2f for x4 the trace)" %
          ("spooled " if spool else "in memory", mb, a, 4 * mb, b, b / a))
PY
