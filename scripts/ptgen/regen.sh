#!/bin/sh
# regen.sh - remake the Intel PT fixtures: the flow files by single-stepping
# the committed programs (skipped with a message when ptrace is refused), then
# every fixture in fixtures.list from the binaries and flows.
#   scripts/ptgen/regen.sh PTGEN [OUT_DIR] [--no-trace]
# OUT_DIR defaults to tests/fixtures/intel-pt-gen (in place).
set -eu
PTGEN=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)/tests/fixtures/intel-pt-gen
OUT=${2:-$SRC}
mkdir -p "$OUT/flows"
if [ "${3:-}" != --no-trace ]; then
	for p in loops threads ptw; do
		"$PTGEN" trace "$SRC/rbfix/$p" "$OUT/flows/$p.flow" || {
			echo "regen.sh: cannot single-step $p here; flows left as committed" >&2
			[ "$OUT" = "$SRC" ] || cp "$SRC/flows/$p.flow" "$OUT/flows/$p.flow"
		}
	done
	for k in kmini kmini-mod; do
		"$PTGEN" ktrace "$SRC/rbfix/$k" "$OUT/flows/$k.flow" || {
			echo "regen.sh: cannot single-step $k here; its flow left as committed" >&2
			[ "$OUT" = "$SRC" ] || cp "$SRC/flows/$k.flow" "$OUT/flows/$k.flow"
		}
	done
else
	[ "$OUT" = "$SRC" ] || cp "$SRC"/flows/*.flow "$OUT/flows/"
fi
grep -v '^#' "$SRC/fixtures.list" | while read -r name variant prog; do
	[ -n "$name" ] || continue
	rm -rf "${OUT:?}/$name"
	"$PTGEN" fixture "$variant" "$SRC/rbfix/$prog" "$OUT/flows/$prog.flow" "$prog" "$OUT/$name"
done
# The kernel-tracing fixtures (not in fixtures.list: decoding them needs the
# stand-in kernel, --vmlinux rbfix/KIMG or their kcore_dir): loops with every
# system call through rbfix/KIMG, and a kcore_dir as perf record --kcore
# writes it (kcore, kallsyms, modules). loops-kmod's kernel calls into a
# module, kmod, at 0xffffffffc0000000.
kernel_fixture() {   # NAME KIMG MODULES_LINE
	rm -rf "${OUT:?}/$1"
	"$PTGEN" fixture kernel "$SRC/rbfix/loops" "$OUT/flows/loops.flow" loops "$OUT/$1" \
		--kernel "$SRC/rbfix/$2" "$OUT/flows/$2.flow"
	mkdir -p "$OUT/$1/kcore_dir"
	"$PTGEN" kcore "$SRC/rbfix/$2" "$OUT/$1/kcore_dir/kcore"
	# kallsyms names module symbols "name\t[module]"
	nm -n "$SRC/rbfix/$2" | awk '$1 !~ /^ffffffffc/ { print; next } { printf "%s t %s\t[kmod]\n", $1, $3 }' \
		>"$OUT/$1/kcore_dir/kallsyms"
	printf '%s' "$3" >"$OUT/$1/kcore_dir/modules"
}
kernel_fixture loops-kernel kmini ""
kernel_fixture loops-kmod kmini-mod "kmod 4096 0 - Live 0xffffffffc0000000
"
# loops-kaslr: the same kernel run 0x2a00000 higher than linked (KASLR); the
# kernel map's pgoff says where _text went. Decoded with --vmlinux rbfix/kmini.
rm -rf "${OUT:?}/loops-kaslr"
"$PTGEN" fixture kernel "$SRC/rbfix/loops" "$OUT/flows/loops.flow" loops "$OUT/loops-kaslr" \
	--kernel "$SRC/rbfix/kmini" "$OUT/flows/kmini.flow" --kaslr 0x2a00000
