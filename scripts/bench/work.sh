#!/bin/sh
# work.sh - the export's work in instructions, against the bare libipt loop's
# over the same bytes, counted by valgrind (callgrind, one file per thread):
# numbers that do not move with the machine's load or its speed, which on a
# shared VM drift by up to 2x within minutes and hide any change below
# that in wall times. scale.sh measures the wall times; this says where
# the instructions go and bounds what two cores can reach:
#  - total: every thread's instructions over bare libipt's (the decoding
#    alone is pt_bare.c's loop; everything above it is ours);
#  - session: the session thread's (take: threads, symbols; the sink:
#    ids, calls, aggregates), which no other thread can share;
#  - bound on N cores: max(session, total / N) over bare, the lowest wall
#    ratio the export could reach if the rest were spread perfectly (the
#    issue's target is 2 on 2 cores).
# Traces are ptgen's (as scale.sh's), small: valgrind runs 50x slower.
#
#   scripts/bench/work.sh [BUILD_DIR] [MB]      (MB, default 2)
set -eu
B=${1:-$(dirname "$0")/../..}
MB=${2:-2}
S=$(cd "$(dirname "$0")/../.." && pwd)
FX=$S/tests/fixtures/intel-pt-gen
PTGEN=$B/scripts/ptgen/ptgen
RBDECODE=$B/rbdecode
command -v valgrind >/dev/null || { echo "work.sh: needs valgrind (apt-get install valgrind)"; exit 1; }
[ -x "$PTGEN" ] && [ -x "$RBDECODE" ] || { echo "work.sh: build the tree first ($B)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbwork.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/pt_bare" "$S/scripts/bench/pt_bare.c" -lipt
text=$(readelf -lW "$FX/rbfix/loops" | awk '$1 == "LOAD" && / R E / { print $3, $2, $5; exit }')

python3 - "$RBDECODE" "$WORK" "$FX" "$text" "$PTGEN" "$MB" "$S/scripts/bench" <<'PY'
import glob, os, subprocess, sys
rb, work, fx, text, ptgen, mb, bench = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5], int(sys.argv[6]), sys.argv[7]
loops, flow = os.path.join(fx, "rbfix/loops"), os.path.join(fx, "flows/loops.flow")

def counted(cmd):
    """per thread of @cmd (valgrind callgrind), in the order they started: (instructions, file)"""
    out = os.path.join(work, "cg")
    for f in glob.glob(out + "*"):
        os.unlink(f)
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out + ".%p"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    per = []
    for f in sorted(glob.glob(out + "*"), key=lambda p: int(p.rsplit("-", 1)[-1]) if "-" in p else 0):
        for line in open(f):
            if line.startswith(("summary:", "totals:")):
                per.append((int(line.split()[1]), f))
                break
    return per

def inclusive(f, fn):
    """the instructions of @fn and what it called, in callgrind file @f"""
    r = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if (":" + fn + " [") in line:
            return int(line.split()[0].replace(",", ""))
    return 0

for thr in ("", "threads"):
    data = os.path.join(work, "pt.data")
    subprocess.run([ptgen, "large", loops, flow, str(mb), data, "1"] + ([thr] if thr else []), stdout=subprocess.DEVNULL, check=True)
    subprocess.run(["python3", os.path.join(bench, "aux_bytes.py"), data, os.path.join(work, "trace.bin")], check=True)
    bare = sum(n for n, _ in counted([os.path.join(work, "pt_bare"), os.path.join(work, "trace.bin"), loops] + text))
    name = "%d MB, one queue%s" % (mb, ", a thread per run" if thr else "")
    db = os.path.join(work, "x.db")
    if os.path.exists(db):
        os.unlink(db)
    # one decoding thread: the session's; the others are the SQLite writer's
    per = counted([rb, data, "--symfs", fx, "-q", "-j", "1", "-o", db])
    main, mainf = per[0]
    decode = inclusive(mainf, "rb_pt_step")          # the part other threads can take (lanes, queues)
    serial, rest = main - decode, sum(n for n, _ in per[1:])
    total = main + rest
    print("%-36s total %5.2fx bare: decoding %4.2fx, session thread's own %4.2fx, writer %4.2fx" %
          (name, total / bare, decode / bare, serial / bare, rest / bare))
    print("%-36s bound on 2 cores: max(session's own, writer, total / 2) = %4.2fx bare (target <= 2); bare libipt %.0f M instructions" %
          ("", max(serial, rest, total / 2) / bare, bare / 1e6))
PY
