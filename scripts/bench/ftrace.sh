#!/bin/sh
# ftrace.sh - rbrecord --ftrace against trace-cmd record on a high-rate
# tracepoint (raw_syscalls:sys_enter and sys_exit) while `dd bs=1` makes
# about a million system calls a second. Each recorder runs 3 times,
# alternating, system-wide with the same per-CPU buffer; its command is
# `sleep`, so the CPU time measured is the recorder's own. Reported: CPU
# time, events kept and events lost (the kernel's overrun counters, read by
# trace-cmd report --stat from either file), and the ratios. Target: no
# more CPU and no more loss than trace-cmd. Needs root and tracefs.
#
#   scripts/bench/ftrace.sh [BUILD_DIR] [SECONDS] [BUFFER_KB]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../..}
SECS=${2:-3}
KB=${3:-1024}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbftr.XXXXXX")
load() { while :; do dd if=/dev/zero of=/dev/null bs=1 count=1000000 2>/dev/null; done; }
load & l1=$!
trap 'kill $l1 2>/dev/null; rm -rf "$WORK"' EXIT

python3 - "$B/rbrecord" "$WORK" "$SECS" "$KB" <<'PY'
import resource, statistics, subprocess, sys
rbrecord, work, secs, kb = sys.argv[1:5]
EV = ["raw_syscalls:sys_enter", "raw_syscalls:sys_exit"]
def run(tool, i):
    if tool == "rbrecord":
        dat = "%s/rb%d.data.trace.dat" % (work, i)
        cmd = [rbrecord, "-q", "-a", "-e", "cpu-clock", "-c", "100000000", "--ftrace", ",".join(EV),
               "--ftrace-buffer-size", kb, "-o", "%s/rb%d.data" % (work, i), "--", "sleep", secs]
    else:
        dat = "%s/tc%d.dat" % (work, i)
        cmd = ["trace-cmd", "record", "-q", "-B", "rbbench", "-b", kb, "-o", dat]
        for e in EV:
            cmd += ["-e", e]
        cmd += ["--", "sleep", secs]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["exit %d" % r.returncode]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    st = subprocess.run(["trace-cmd", "report", "--stat", dat], capture_output=True, text=True).stdout
    lost = sum(int(l.split()[1]) for l in st.splitlines() if l.startswith("overrun:"))
    ev = subprocess.run("trace-cmd report %s 2>/dev/null | grep -c ': sys_e'" % dat, shell=True,
                        capture_output=True, text=True).stdout.strip()
    return (cpu, lost, int(ev or 0)), None
res = {"trace-cmd": [], "rbrecord": []}
why = {}
tools = ["trace-cmd", "rbrecord"]
try:
    open("/sys/kernel/tracing/set_ftrace_pid").read()
except OSError as e:
    # trace-cmd 3.1 record crashes when it cannot read this file, leaving its per-CPU readers running
    why["trace-cmd"] = ["not run: /sys/kernel/tracing/set_ftrace_pid cannot be read here (%s)" % e.strerror]
    tools.remove("trace-cmd")
for i in range(3):
    for tool in tools:
        r, err = run(tool, i)
        if r:
            res[tool].append(r)
        else:
            why[tool] = err
med = {}
for tool, runs in res.items():
    if not runs:
        print("%-9s could not record here: %s" % (tool, " ".join(why.get(tool, ["?"]))))
        continue
    med[tool] = [statistics.median(r[k] for r in runs) for k in range(3)]
    print("%-9s cpu %.3f s  lost %d  kept %d events  (median of %d)" % (tool, med[tool][0], med[tool][1],
          med[tool][2], len(runs)))
if len(med) == 2:
    a, b = med["rbrecord"], med["trace-cmd"]
    print("ratio rbrecord/trace-cmd: cpu %.2f  lost %s" % (a[0] / b[0] if b[0] else float("nan"),
          "%.2f" % (a[1] / b[1]) if b[1] else ("0/0" if not a[1] else "%d/0" % a[1])))
PY
for d in /sys/kernel/tracing/instances/rbbench; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
true
