#!/bin/sh
# record.sh - rbrecord against perf record on the same high-rate workload:
# system-wide cpu-clock every 20 us for a few seconds while two shell loops
# spin, in each mode a user records in: plain, -g (frame-pointer call
# chains), --call-graph dwarf (8 KiB of user stack per sample), -z (zstd
# COMPRESSED records) and --threads (one drain thread per CPU, the perf.data
# directory format). Per mode each recorder runs RUNS times (3), alternating;
# reported: the recorder's own CPU time (its command is `sleep`), records
# lost (LOST records, counted by rbdecode info), samples and bytes written,
# and the ratios. A mode one of the two recorders does not know is skipped
# with the reason. Target: no more CPU than perf, no more loss.
#
#   scripts/bench/record.sh [BUILD_DIR] [SECONDS]
#   MODES="plain g dwarf z threads" (the default) to pick
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../..}
SECS=${2:-3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbrec.XXXXXX")
spin() { i=0; while :; do i=$((i+1)); done; }
spin & s1=$!
spin & s2=$!
trap 'kill $s1 $s2 2>/dev/null; rm -rf "$WORK"' EXIT

python3 - "$B/rbrecord" "$B/rbdecode" "$WORK" "$SECS" "${MODES:-plain g dwarf z threads}" "${RUNS:-3}" <<'PY'
import json, os, resource, shutil, subprocess, sys, statistics
rbrecord, rbdecode, work, secs, modes, runs = sys.argv[1:7]
runs = int(runs)
OPTS = {"plain": [], "g": ["-g"], "dwarf": ["--call-graph", "dwarf"], "z": ["-z"], "threads": ["--threads"]}

def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path) if os.path.exists(path) else 0

def cmd(tool, mode, out, command):
    base = [rbrecord, "-q"] if tool == "rbrecord" else ["perf", "record", "-q"]
    return base + ["-a", "-e", "cpu-clock", "-c", "20000", "-m", "128"] + OPTS[mode] + ["-o", out, "--"] + command

def works(tool, mode):
    out = "%s/probe-%s-%s.data" % (work, tool, mode)
    r = subprocess.run(cmd(tool, mode, out, ["true"]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ok = r.returncode == 0 and size(out) > 0
    shutil.rmtree(out, ignore_errors=True) if os.path.isdir(out) else (os.path.exists(out) and os.remove(out))
    return ok, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0]

def run(tool, mode, i):
    out = "%s/%s-%s%d.data" % (work, tool, mode, i)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd(tool, mode, out, ["sleep", secs]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    st = {"lost_events": 0, "by_type": {}}
    r = subprocess.run([rbdecode, "info", "--stats", "--json", out], capture_output=True)
    try:
        st = json.loads(r.stdout)["stats"]
    except (ValueError, KeyError):
        pass
    nbytes = size(out)
    shutil.rmtree(out, ignore_errors=True) if os.path.isdir(out) else os.remove(out)
    return cpu, st["lost_events"], st["by_type"].get("SAMPLE", 0), nbytes

for mode in modes.split():
    if mode not in OPTS:
        print("%-8s unknown mode (one of %s)" % (mode, " ".join(OPTS)))
        continue
    why = [(t,) + works(t, mode) for t in ("perf", "rbrecord")]
    bad = [(t, msg) for t, ok, msg in why if not ok]
    if bad:
        print("%-8s skipped: %s" % (mode, "; ".join("%s: %s" % b for b in bad)))
        continue
    res = {"perf": [], "rbrecord": []}
    for i in range(runs):
        for tool in ("perf", "rbrecord"):
            res[tool].append(run(tool, mode, i))
    med = {t: [statistics.median(r[k] for r in res[t]) for k in range(4)] for t in res}
    for tool in ("perf", "rbrecord"):
        m = med[tool]
        print("%-8s %-9s cpu %.3f s  lost %d  samples %d  bytes %d  (median of %d)" %
              (mode, tool, m[0], m[1], m[2], m[3], runs))
    p, o = med["perf"], med["rbrecord"]
    print("%-8s ratio rbrecord/perf: cpu %.2fx (target <= 1), lost %d vs %d (target <= perf's), bytes %.2fx" %
          (mode, o[0] / p[0] if p[0] else float("nan"), o[1], p[1], o[3] / p[3] if p[3] else float("nan")))
PY
