#!/bin/sh
# read.sh - rbdecode info against perf report --stats on one recording of at
# least 200 MB, made on the spot (system-wide cpu-clock with call graphs while
# two shell loops spin). Both read every record; rbdecode also parses every
# record in full. Prints wall time, CPU time and peak RSS of each (median of
# 3 runs) and the ratio perf / rbdecode (above 1: rbdecode is faster).
#
#   scripts/bench/read.sh [RBDECODE] [SIZE_MB]
set -eu
RBDECODE=${1:-$(dirname "$0")/../../rbdecode}
SIZE_MB=${2:-200}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
f="$WORK/big.data"

echo "recording >= $SIZE_MB MB with perf record -a -g ..."
perf record -q -a -g -e cpu-clock -c 10000 -m 1024 -o "$f" -- sh -c '
	spin() { i=0; while :; do i=$((i+1)); done; }
	spin & a=$!; spin & b=$!
	while [ "$(stat -c %s "'"$f"'")" -lt $(('"$SIZE_MB"' * 1048576)) ]; do sleep 1; done
	kill $a $b' >/dev/null 2>&1
echo "recording: $(stat -c %s "$f") bytes"

python3 - "$RBDECODE" "$f" <<'PY'
import resource, subprocess, sys, time, statistics
rb, f = sys.argv[1], sys.argv[2]
def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, out
def total(out):
    for line in out.decode(errors="replace").splitlines():
        if "TOTAL events:" in line:
            return int(line.split()[-1])
res = {}
for name, cmd in (("perf", ["perf", "report", "--stats", "-i", f]), ("rbdecode", [rb, "info", "--stats", f])):
    runs = [run(cmd) for _ in range(3)]
    res[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
                 max(r[2] for r in runs), total(runs[0][3]))
    # ru_maxrss of children is the maximum over all children so far: measure rbdecode first next time
for name, (wall, cpu, rss, tot) in res.items():
    print("%-9s wall %.3f s  cpu %.3f s  records %s" % (name, wall, cpu, tot))
print("records agree: %s" % (res["perf"][3] == res["rbdecode"][3]))
print("ratio perf/rbdecode: wall %.2fx, cpu %.2fx (target >= 1.5x)" %
      (res["perf"][0] / res["rbdecode"][0], res["perf"][1] / res["rbdecode"][1]))
PY
# peak memory, each in its own process so the numbers are its own
for cmd in "perf report --stats -i $f" "$RBDECODE info --stats $f"; do
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("peak RSS %-9s %d MiB" % (sys.argv[1].split("/")[-1], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))' $cmd
done
