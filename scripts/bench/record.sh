#!/bin/sh
# record.sh - rbrecord against perf record on the same high-rate workload:
# system-wide cpu-clock every 20 us for a few seconds while two shell loops
# spin. Each recorder runs 3 times, alternating; reported: the recorder's own
# CPU time (its command is `sleep`), records lost (LOST records, counted by
# rbdecode info) and samples, and the ratios. Target: no more CPU than perf,
# no more loss.
#
#   scripts/bench/record.sh [BUILD_DIR] [SECONDS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../..}
SECS=${2:-3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbrec.XXXXXX")
spin() { i=0; while :; do i=$((i+1)); done; }
spin & s1=$!
spin & s2=$!
trap 'kill $s1 $s2 2>/dev/null; rm -rf "$WORK"' EXIT

python3 - "$B/rbrecord" "$B/rbdecode" "$WORK" "$SECS" <<'PY'
import json, resource, subprocess, sys, statistics
rbrecord, rbdecode, work, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def run(tool, i):
    out = "%s/%s%d.data" % (work, tool, i)
    cmd = ([rbrecord] if tool == "rbrecord" else ["perf", "record", "-q"]) + \
          ["-a", "-e", "cpu-clock", "-c", "20000", "-m", "128", "-o", out, "--", "sleep", secs]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    info = json.loads(subprocess.run([rbdecode, "info", "--stats", "--json", out], capture_output=True).stdout)
    st = info["stats"]
    return cpu, st["lost_events"], st["by_type"].get("SAMPLE", 0)
res = {"perf": [], "rbrecord": []}
for i in range(3):
    for tool in ("perf", "rbrecord"):
        res[tool].append(run(tool, i))
for tool, runs in res.items():
    print("%-9s cpu %.3f s  lost %d  samples %d  (median of 3)" % (tool,
          statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
          statistics.median(r[2] for r in runs)))
p = [statistics.median(r[k] for r in res["perf"]) for k in range(3)]
o = [statistics.median(r[k] for r in res["rbrecord"]) for k in range(3)]
print("ratio rbrecord/perf: cpu %.2fx (target <= 1), lost %s (target <= perf's)" %
      (o[0] / p[0] if p[0] else float("nan"), "%d vs %d" % (o[1], p[1])))
PY
