#!/bin/sh
# seeds.sh OUT - seed corpora for the fuzz targets, made at run time from the
# fixtures (tests/fixtures, $RB_FIXTURES) and from short recordings made on
# the spot with rbrecord (and perf, when it can record here). Nothing is
# copied into the source tree. One folder per target under OUT.
#   needs: top_srcdir, top_builddir (rbrecord, tests/tools/pdconvert)
set -u
out=$1
src=${top_srcdir:-.}
bld=${top_builddir:-.}
fx=${RB_FIXTURES:-$src/../shared/fixtures}
rm -rf "$out"
mkdir -p "$out/perfdata" "$out/rbdecode" "$out/unpack" "$out/cs_snapshot" "$out/imc" "$out/symtab" "$out/trace_pt" "$out/trace_cs" "$out/rbtrace"
w=$out/work
mkdir -p "$w"

# recordings: fixtures no larger than 1 MiB, and fresh ones
for f in "$fx"/intel-pt/perf.data.* "$fx"/coresight-perf/*.data $(find "$src/tests/fixtures" -type f -size -1024k 2>/dev/null); do
	[ -f "$f" ] || continue
	case $f in *perf_inject.data|*.buildids) continue ;; esac
	cp "$f" "$out/perfdata/$(basename "$f")"
done
"$bld/rbrecord" -q -e cpu-clock -c 100000 -o "$w/rec-file.data" -- sh -c 'true' >/dev/null 2>&1 &&
	cp "$w/rec-file.data" "$out/perfdata/"
"$bld/rbrecord" -q -e cpu-clock -c 100000 -o - -- true 2>/dev/null >"$w/rec-pipe.data" &&
	cp "$w/rec-pipe.data" "$out/perfdata/"
"$bld/rbrecord" -q -e '{cpu-clock,task-clock}' -c 50000 --per-thread -o "$w/rec-group.data" -- true >/dev/null 2>&1 &&
	cp "$w/rec-group.data" "$out/perfdata/"
if command -v perf >/dev/null 2>&1; then
	perf record -q -g -e cpu-clock -c 100000 -o "$w/perf-g.data" -- true >/dev/null 2>&1 && cp "$w/perf-g.data" "$out/perfdata/"
	perf record -q -z -e cpu-clock -c 100000 -o "$w/perf-z.data" -- true >/dev/null 2>&1 && cp "$w/perf-z.data" "$out/perfdata/"
fi
for f in "$out"/perfdata/*; do
	[ -s "$f" ] || { rm -f "$f"; continue; }
	b=$(basename "$f")
	"$bld/tests/tools/pdconvert" --foreign "$f" "$out/perfdata/foreign-$b" >/dev/null 2>&1 || rm -f "$out/perfdata/foreign-$b"
	"$bld/tests/tools/pdconvert" --pipe "$f" "$out/perfdata/pipe-$b" >/dev/null 2>&1 || rm -f "$out/perfdata/pipe-$b"
done
find "$out/perfdata" -type f -size +1024k -delete
# trace_pt, trace_cs: each AUXTRACE payload of the Intel PT fixtures and of the CoreSight recordings
aux_payloads() {   # aux_payloads PERF.DATA OUTDIR PREFIX
	python3 - "$@" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
if d[:8] != b'PERFILE2' or len(d) < 104 or struct.unpack_from('<Q', d, 8)[0] < 104:
    sys.exit(0)              # not a file-mode header (pipe mode has no data section to walk)
off, size = struct.unpack_from('<QQ', d, 40)
p, end, n = off, off + size, 0
while p + 8 <= end:
    t, misc, sz = struct.unpack_from('<IHH', d, p)
    if sz < 8:
        break
    extra = struct.unpack_from('<Q', d, p + 8)[0] if t == 71 else 0
    if t == 71 and extra:
        open('%s/%s-%d' % (sys.argv[2], sys.argv[3], n), 'wb').write(d[p + sz:p + sz + extra])
        n += 1
    p += sz + extra
PY
}
for f in "$src"/tests/fixtures/intel-pt-gen/*/perf.data; do
	[ -f "$f" ] && aux_payloads "$f" "$out/trace_pt" "$(basename "$(dirname "$f")")"
done
for f in "$fx"/coresight-perf/perf_etm.data "$fx"/coresight-perf/perf_with_missing_aux_data.data; do
	[ -f "$f" ] && aux_payloads "$f" "$out/trace_cs" "$(basename "$f" .data)"
done
cp "$out"/perfdata/* "$out/rbdecode/"
# rbtrace: programs of fuzz_rbtrace.c's little language (template and switches, row changes, query;
# templates in run.sh's order: loops-full, threads-2cpu, ptgen's 1 MB one queue, ptgen's 4 CPUs):
# a whole-trace count (in two parts), every column of a time window, calls before a time, the count
# with a trace_seek row changed, a window with the trace index's first row deleted
printf '\002\000\001\000\000' >"$out/rbtrace/count"
printf '\003\000\001\001\002\011\004\001\006\011\001\001\003' >"$out/rbtrace/window"
printf '\001\000\000\000\001\004\001\002\000\000\000\000\000\000\377\377' >"$out/rbtrace/calls"
printf '\002\001\000\000\001\001\015\002\000\005\001\000\000' >"$out/rbtrace/seek-changed"
printf '\042\001\001\000\000\000\001\001\001\011\004\001\006' >"$out/rbtrace/index-deleted"

# archives: a small perf-archive style tree (a recording, a build-id object,
# kallsyms, a link inside) in every container and compression the reader takes
if [ -s "$w/rec-file.data" ]; then
	t=$w/tree
	mkdir -p "$t/.build-id/ab" "$t/[kernel.kallsyms]/ab0123"
	cp "$w/rec-file.data" "$t/perf.data"
	printf '\177ELF not really\n' >"$t/.build-id/ab/cdef0123"
	printf 'ffffffff81000000 T _stext\nffffffff81000100 t other\n' >"$t/[kernel.kallsyms]/ab0123/kallsyms"
	ln -s cdef0123 "$t/.build-id/ab/link"
	tar cf "$out/unpack/rec.tar" -C "$t" .
	tar czf "$out/unpack/rec.tar.gz" -C "$t" .
	tar cJf "$out/unpack/rec.tar.xz" -C "$t" . 2>/dev/null || rm -f "$out/unpack/rec.tar.xz"
	tar cjf "$out/unpack/rec.tar.bz2" -C "$t" . 2>/dev/null || rm -f "$out/unpack/rec.tar.bz2"
	tar --zstd -cf "$out/unpack/rec.tar.zst" -C "$t" . 2>/dev/null || rm -f "$out/unpack/rec.tar.zst"
	(cd "$t" && python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in ("perf.data", ".build-id/ab/cdef0123", "[kernel.kallsyms]/ab0123/kallsyms"):
        z.write(f)' "$out/unpack/rec.zip") || rm -f "$out/unpack/rec.zip"
	cp "$out/unpack/rec.tar.gz" "$out/rbdecode/"
fi

# CoreSight snapshots of at most 128 KiB, as bundles (see fuzz_cs_snapshot.c)
for d in "$fx"/opencsd-snapshots/*/*/; do
	[ -f "$d/snapshot.ini" ] || continue
	[ "$(du -sk "$d" | cut -f1)" -le 128 ] || continue
	name=$(basename "$d")
	{
		printf '\000'
		(cd "$d" && find . -type f ! -path './pkt_proc_logs/*' | sed 's|^\./||' | sort) | while read -r f; do
			printf '@@ %s\n' "$f"
			cat "$d/$f"
			printf '\n'
		done
	} >"$out/cs_snapshot/$name"
done

python3 "$src/tests/fuzz/mkimc.py" "$out/imc"

# objects: the traced binary of the CoreSight fixture, small system programs (the
# ELF readers' input), and kallsyms text (the kernel's, or a few made-up lines)
for f in "$fx/coresight-perf/etm_test_loop" /usr/bin/true; do
	[ -f "$f" ] && [ "$(wc -c <"$f")" -le 1048576 ] && cp "$f" "$out/symtab/$(basename "$f")"
done
head -n 300 /proc/kallsyms 2>/dev/null >"$w/kallsyms"
[ -s "$w/kallsyms" ] && ! grep -q '^0000000000000000' "$w/kallsyms" && cp "$w/kallsyms" "$out/symtab/kallsyms"
printf 'ffffffff81000000 T _stext\nffffffff81000100 t helper\nffffffffc0001000 t ext4_fn\t[ext4]\nffffffffc0002000 T ext4_other\t[ext4]\n' \
	>"$out/symtab/kallsyms-small"
rm -rf "$w"
for t in perfdata rbdecode unpack cs_snapshot imc symtab; do
	echo "seeds for fuzz_$t: $(ls "$out/$t" | wc -l) files, $(du -sk "$out/$t" | cut -f1) KiB"
done
