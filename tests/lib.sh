# lib.sh - sourced by the shell tests: TAP output, skips with reasons, a
# scratch folder, and the normaliser that turns `perf report --stats` and
# `rbdecode info --stats` into comparable "EVENT/TYPE COUNT" lines; per_event
# (samples per event in perf script's text) and spwalk (a simpleperf recording
# walked from simpleperf's layouts); and what keeps a test independent of the
# machine's speed and load: cpu_work (a workload of so much CPU time, not so
# many iterations) and wait_for (a state another process reaches, not a sleep).
set -u
tap_n=0
tap_failed=0
RBDECODE=${RBDECODE:-rbdecode}
PDCONVERT=${PDCONVERT:-${top_builddir:-.}/tests/tools/pdconvert}
RB_FIXTURES=${RB_FIXTURES:-${top_srcdir:-.}/../shared/fixtures}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbtest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

ok() {   # ok STATUS NAME: STATUS 0 passes
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}
# todo STATUS NAME WHY: a known bug, reported (TAP TODO) but not failing the suite until fixed
todo() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2 # TODO $3"; fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
diag() { sed 's/^/# /'; }
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }

# Skip the whole test unless perf can record software events here.
need_perf_record() {
	command -v perf >/dev/null 2>&1 || skip_all "perf is not installed (Debian package linux-perf)"
	perf record -q -e cpu-clock -o "$WORK/probe.data" -- true >/dev/null 2>&1 ||
		skip_all "perf record cannot open software events here (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
}

# perf's export-to-sqlite.py, and why it cannot run here: prints the reason
# and fails when perf, the script, PySide2's QtSql (python3-pyside2.qtsql) or
# Qt's SQLite driver (libqt5sql5-sqlite, only a Recommends) is missing.
# perf runs its scripts with the system's Python.
EXPORT=/usr/lib/perf-core/scripts/python/export-to-sqlite.py
perf_export_missing() {
	if ! command -v perf >/dev/null 2>&1; then
		echo "perf is not installed (Debian package linux-perf)"
	elif [ ! -f "$EXPORT" ]; then
		echo "perf's export-to-sqlite.py is not installed (Debian linux-perf)"
	elif ! /usr/bin/python3 -c 'import PySide2.QtSql' 2>/dev/null; then
		echo "export-to-sqlite.py needs python3-pyside2.qtsql"
	elif ! /usr/bin/python3 -c 'from PySide2.QtSql import QSqlDatabase as D; exit(not D.isDriverAvailable("QSQLITE"))' 2>/dev/null; then
		echo "Qt has no SQLite driver (Debian package libqt5sql5-sqlite)"
	else
		return 1
	fi
}

# stdin: perf report --stats or rbdecode info --stats; stdout: "NAME COUNT" per
# aggregated type and "EVENT/SAMPLE COUNT" per event.
stats_norm() {
	awk '/^Aggregated stats:/ { s = 1; next }
	     s && / stats:$/ { ev = $0; sub(/ stats:$/, "", ev); next }
	     s && / events:/ { print (ev != "" ? ev "/" : "") $1, $3 }'
}

# compare_stats NAME FILE [PERF_INPUT]: perf report --stats and rbdecode info
# --stats on FILE (read through stdin when it is a pipe-mode file) agree.
compare_stats() {
	name=$1 file=$2
	if [ "${3:-}" = pipe ]; then
		perf report --stats -i - <"$file" 2>"$WORK/perf.err" | stats_norm >"$WORK/perf.stats"
		"$RBDECODE" info --stats - <"$file" 2>"$WORK/rb.err" | stats_norm >"$WORK/rb.stats"
	else
		perf report --stats -i "$file" 2>"$WORK/perf.err" | stats_norm >"$WORK/perf.stats"
		"$RBDECODE" info --stats "$file" 2>"$WORK/rb.err" | stats_norm >"$WORK/rb.stats"
	fi
	if [ -s "$WORK/perf.stats" ] && cmp -s "$WORK/perf.stats" "$WORK/rb.stats"; then
		ok 0 "$name: record counts equal perf report --stats ($(head -n 1 "$WORK/rb.stats"))"
	else
		ok 1 "$name: record counts equal perf report --stats"
		diff "$WORK/perf.stats" "$WORK/rb.stats" | head -n 20 | diag
		head -n 5 "$WORK/perf.err" "$WORK/rb.err" | diag
	fi
}

# A CPU-bound workload of a few hundred milliseconds that forks (for COMM/FORK/EXIT).
WORKLOAD='sh -c "i=0; while [ \$i -lt 40000 ]; do i=\$((i+1)); done; true"'

# cpu_work SECONDS: sh code (for sh -c) that spins until its shell has used SECONDS of CPU
# time (utime + stime of /proc/PID/stat, the runtime task-clock and a task's cpu-clock
# count): as many samples at a fixed period on a fast machine as on a slow or loaded one,
# where a loop of so many iterations gives as many as the machine's speed makes it.
cpu_work() {
	_ticks=$(awk -v s="$1" -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" 'BEGIN { printf "%d", s * hz }')
	echo "while read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u s _ </proc/\$\$/stat && [ \$((u + s)) -lt $_ticks ]; do i=0; while [ \$i -lt 1000 ]; do i=\$((i + 1)); done; done"
}

# wait_for PID CMD...: run CMD every 0.05 s until it succeeds, for up to two minutes, or
# until process PID (when not -) is gone; CMD's last status. For a state another process
# reaches in its own time (a marker its command writes, a file that grows), where a fixed
# sleep is too short on a loaded or slow machine.
wait_for() {
	_wp=$1 _wn=0
	shift
	until "$@"; do
		{ [ "$_wp" = - ] || kill -0 "$_wp" 2>/dev/null; } && [ $_wn -lt 2400 ] || { "$@"; return; }
		_wn=$((_wn + 1))
		sleep 0.05
	done
}
# damage_eleven IN OUT: a copy of recording IN with 48 bytes of 0xff at eleven places spread over the
# file (in a long Intel PT trace, all in its AUX data): decoders lose sync there, eleven times
damage_eleven() {
	python3 - "$1" "$2" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
for k in range(1, 12):
    at = len(d) * k // 13 + (k * 977) % 4096
    d[at:at + 48] = b'\xff' * 48
open(sys.argv[2], 'wb').write(d)
PY
}
# size_of FILE: its size in bytes, 0 when it does not exist
size_of() { if [ -f "$1" ]; then wc -c <"$1"; else echo 0; fi; }
# larger FILE BYTES: FILE holds more than BYTES bytes
larger() { [ "$(size_of "$1")" -gt "$2" ]; }

# per_event: "EVENT COUNT" of the samples in perf script's (or our) text
per_event() {
	sed -En 's/^.* [0-9]+\.[0-9]*: +([0-9]+ +)?([^ ]*): .*/\2/p' | sort | uniq -c |
		awk '{ print $2, $1 }'
}

# spwalk FILE: what a simpleperf recording holds, walked here in Python from
# simpleperf's own layouts (record.h, record.cpp, record_file_format.h) as an
# oracle independent of rbdecode's reader, for the files perf cannot read.
# Records of simpleperf's types (32768 on) carry a 32-bit size; SPLIT records
# up to SPLIT_END join into one record; TRACING_DATA holds its data, padded to
# 64, inside the record; feature 129 (META_INFO) names the events in
# event_type_info ("name,type,config" lines), to which simpleperf adds ":u"
# or ":k" (GetEventNameByAttr); an event it does not name gets perf's name
# and modifiers (evsel__name); feature 128 (FILE) holds a symbol table per
# binary. Prints stats_norm lines ("TYPE COUNT", "EVENT/SAMPLE COUNT"), then
# "NAME name" per attr, "FILE path symbols" per FILE entry, and per attr
# "PERFNAME<tab>perf's name<tab>the name above" (perf ignores META_INFO).
spwalk() {
	python3 - "$1" <<'PY'
import struct, sys, collections
d = open(sys.argv[1], 'rb').read()
names = {1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 5: "THROTTLE", 6: "UNTHROTTLE", 7: "FORK",
         8: "READ", 9: "SAMPLE", 10: "MMAP2", 11: "AUX", 12: "ITRACE_START", 13: "LOST_SAMPLES",
         14: "SWITCH", 15: "SWITCH_CPU_WIDE", 16: "NAMESPACES", 17: "KSYMBOL", 18: "BPF_EVENT",
         19: "CGROUP", 20: "TEXT_POKE", 21: "AUX_OUTPUT_HW_ID", 66: "TRACING_DATA", 67: "BUILD_ID",
         68: "FINISHED_ROUND", 70: "AUXTRACE_INFO", 71: "AUXTRACE", 32769: "SIMPLEPERF_KERNEL_SYMBOL",
         32770: "SIMPLEPERF_DSO", 32771: "SIMPLEPERF_SYMBOL", 32774: "SIMPLEPERF_EVENT_ID",
         32775: "SIMPLEPERF_CALLCHAIN", 32776: "SIMPLEPERF_UNWINDING_RESULT",
         32777: "SIMPLEPERF_TRACING_DATA", 32778: "SIMPLEPERF_DEBUG"}
HW = ["cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses",
      "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles"]
SW = ["cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults",
      "major-faults", "alignment-faults", "emulation-faults", "dummy"]
def bit(flags, b):
    return flags >> b & 1
def perf_name(typ, config, flags):   # perf's evsel__name and evsel__add_modifiers
    if typ == 0 or typ == 1:
        t = HW if typ == 0 else SW
        name = t[config] if config < len(t) else "unknown-hardware" if typ == 0 else "unknown-software"
    elif typ == 2:
        return "unknown tracepoint"
    else:
        return "unknown attr type: %d" % typ
    xu, xk, xh, precise = bit(flags, 4), bit(flags, 5), bit(flags, 6), flags >> 15 & 3
    mod, guest_default = "", False
    if xu or xk or xh:
        mod += ("" if xk else "k") + ("" if xu else "u") + ("" if xh else "h")
        guest_default = True
    if precise:
        mod += "p" * precise
        guest_default = True
    if bit(flags, 19) or bit(flags, 20) == guest_default:
        mod += ("" if bit(flags, 19) else "H") + ("" if bit(flags, 20) else "G")
    return name + (":" + mod if mod else "")
attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<QQQQQ', d, 16)
feats = struct.unpack_from('<4Q', d, 72)
# attrs: perf_event_attr then {ids offset, size}
attrs, id2attr = [], {}
for i in range(attrs_size // attr_size):
    a = attrs_off + i * attr_size
    typ, asz, config, period, stype = struct.unpack_from('<IIQQQ', d, a)
    flags, = struct.unpack_from('<Q', d, a + 40)
    ids_off, ids_size = struct.unpack_from('<QQ', d, a + attr_size - 16)
    attrs.append((typ, config, stype, flags))
    for k in range(ids_size // 8):
        id2attr[struct.unpack_from('<Q', d, ids_off + 8 * k)[0]] = i
# features: META_INFO names the events, FILE lists the symbol tables
sections, k = {}, 0
for f in range(256):
    if feats[f // 64] >> (f % 64) & 1:
        sections[f] = struct.unpack_from('<QQ', d, data_off + data_size + 16 * k)
        k += 1
evname = {}
if 129 in sections:
    o, s = sections[129]
    kv = d[o:o + s].split(b'\0')
    meta = dict(zip(kv[0::2], kv[1::2]))
    for line in meta.get(b'event_type_info', b'').decode().splitlines():
        n, t, c = line.rsplit(',', 2)
        evname[(int(t), int(c))] = n
def name_of(typ, config, flags):
    if (typ, config) not in evname:
        return perf_name(typ, config, flags)
    xu, xk = bit(flags, 4), bit(flags, 5)
    return evname[(typ, config)] + (":u" if xk and not xu else ":k" if xu and not xk else "")
files = []
if 128 in sections:
    o, s = sections[128]
    p = o
    while p + 4 <= o + s:
        size, = struct.unpack_from('<I', d, p)
        path = d[p + 4:d.index(b'\0', p + 4)]
        q = p + 4 + len(path) + 1
        files.append((path.decode(), struct.unpack_from('<I', d, q + 12)[0]))
        p += 4 + size
def one(p):   # (type, size) of the record at p
    t, = struct.unpack_from('<I', d, p)
    hi, lo = struct.unpack_from('<HH', d, p + 4)
    return t, (hi << 16 | lo) if t >= 32768 else lo
def id_of_sample(rec, stype):
    if stype & (1 << 16):                     # IDENTIFIER
        return struct.unpack_from('<Q', rec, 8)[0]
    p = 8 + 8 * sum(1 for b in (0, 1, 2, 3) if stype >> b & 1)   # IP TID TIME ADDR
    return struct.unpack_from('<Q', rec, p)[0]
c, samples = collections.Counter(), collections.Counter()
p, end = data_off, data_off + data_size
while p < end:
    t, size = one(p)
    if size < 8:
        sys.exit("record of %d bytes at offset %d" % (size, p))
    rec = d[p:p + size]
    p += size
    if t == 71:                               # AUXTRACE: its trace data follows it
        p += struct.unpack_from('<Q', rec, 8)[0]
    if t == 32772:                            # SPLIT ... SPLIT_END: one record
        body = rec[8:]
        while one(p)[0] == 32772:
            body += d[p + 8:p + one(p)[1]]
            p += one(p)[1]
        assert one(p)[0] == 32773
        p += one(p)[1]
        rec = body
        t = struct.unpack_from('<I', rec)[0]
    c[t] += 1
    if t == 9 and len(attrs) > 1:
        samples[id2attr[id_of_sample(rec, attrs[0][2])]] += 1
    elif t == 9:
        samples[0] += 1
print("TOTAL", sum(c.values()))
for t in sorted(c):
    print(names.get(t, "TYPE_%d" % t), c[t])
for i, (typ, config, _, flags) in enumerate(attrs):
    if samples[i]:
        print("%s/SAMPLE %d" % (name_of(typ, config, flags), samples[i]))
for typ, config, _, flags in attrs:
    print("NAME", name_of(typ, config, flags))
for typ, config, _, flags in attrs:         # the name perf gives it, and ours
    print("PERFNAME\t%s\t%s" % (perf_name(typ, config, flags), name_of(typ, config, flags)))
for path, nsym in files:
    print("FILE", path, nsym)
PY
}

# event_lines: "NAME; id = { ... }; sample_type = ..." for every "# event :"
# line of perf report --header-only or rbdecode info --header-only (perf
# writes "name = NAME, , " and omits the id list of an event without ids).
event_lines() {
	awk '/^# event : name = / {
		l = substr($0, 18); e = length(l) + 1
		n = split(", , |, id = {|, type = ", cut, "|")
		for (i = 1; i <= n; i++)
			if ((p = index(l, cut[i])) && p < e)
				e = p
		id = match(l, /id = \{[^}]*\}/) ? substr(l, RSTART, RLENGTH) : "no ids"
		st = match(l, /sample_type = [A-Z_|]*/) ? substr(l, RSTART, RLENGTH) : "no sample_type"
		print substr(l, 1, e - 1) "; " id "; " st
	}'
}

# The header lines perf report --header-only [-I] and rbdecode info
# --header-only print alike (grep -E pattern).
HEADER_FIELDS='^# ((hostname|os release|perf version|arch|nrcpus online|nrcpus avail|cpudesc|cpuid|total memory|cmdline) :|node[0-9]+ (meminfo|cpu list)| L[0-9] )'
