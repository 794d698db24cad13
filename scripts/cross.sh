#!/bin/sh
# cross.sh - rbrecord for the target machines (aarch64, ppc64le, big-endian
# ppc64) from an x86-64 Debian 12 with its cross compilers; the build, the
# ring consumers' barrier check and qemu-user runs that tests/cross.test uses.
#
#   scripts/cross.sh build [-o DIR] [--shared] [--units] TARGET [CONFIGURE_ARGS...]
#       out-of-tree build in DIR (default _cross/TARGET): --host=TARGET
#       --disable-decoder, rbrecord static unless --shared (one file to copy to
#       the board: DIR/rbrecord). --units also builds the hermetic unit tests
#       (CROSS_UNITS in tests/cross.mk) for `run`.
#   scripts/cross.sh barriers TARGET DIR
#       every recorder function that uses __atomic acquire / release must carry
#       the target's acquire / release instructions in DIR's objects (aarch64:
#       ldar/ldapr, stlr; POWER: ld+cmp+bne+isync, lwsync before the store);
#       on x86-64 (plain mov under TSO) the optimized GIMPLE must keep the
#       __atomic builtins with their memory order. One line per function.
#   scripts/cross.sh run TARGET PROGRAM [ARGS...]
#       run a TARGET program under qemu-user (Debian qemu-user-static).
#
# TARGET is a Debian cross triplet: aarch64-linux-gnu, powerpc64le-linux-gnu,
# powerpc64-linux-gnu (packages gcc-TARGET; qemu-user-static for `run`).
# Exit status 77: the tool this needs is missing (the message says which).
set -u
# a build of its own: nothing from a calling make (make check's TESTS=, jobserver, -w)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
top=$(cd "$(dirname "$0")/.." && pwd)
srcdir=${top_srcdir:-$top}

die() { echo "cross.sh: $*" >&2; exit 1; }
missing() { echo "cross.sh: $*" >&2; exit 77; }

# Debian package suffix / qemu name of a triplet
qemu_of() {
	case $1 in
	aarch64-*) echo aarch64 ;;
	powerpc64le-*) echo ppc64le ;;
	powerpc64-*) echo ppc64 ;;
	arm-*|armhf-*) echo arm ;;
	*) echo "" ;;
	esac
}

native() { [ "$1" = native ] || [ "$1" = "$(${CC:-cc} -dumpmachine 2>/dev/null)" ]; }

cmd_build() {
	dir= static=--enable-static-recorder units=
	while [ $# -gt 0 ]; do
		case $1 in
		-o) dir=$2; shift 2 ;;
		--shared) static=; shift ;;
		--units) units=1; shift ;;
		*) break ;;
		esac
	done
	[ $# -ge 1 ] || die "build: TARGET missing"
	target=$1
	shift
	command -v "$target-gcc" >/dev/null 2>&1 || missing "no cross compiler $target-gcc (Debian package gcc-$target)"
	[ -x "$srcdir/configure" ] || die "$srcdir/configure missing: run autoreconf -fi there first"
	[ -f "$srcdir/config.status" ] &&
		missing "$srcdir is configured in place; a cross build is out of tree (make distclean there first)"
	dir=${dir:-$PWD/_cross/$target}
	mkdir -p "$dir" || die "cannot create $dir"
	# pkg-config answers for the build machine: configure checks that what it finds links for
	# TARGET and builds without libzstd / libarchive when they do not
	(cd "$dir" && "$srcdir/configure" --host="$target" --disable-decoder $static "$@" >configure.out 2>&1) ||
		{ tail -n 20 "$dir/configure.out" >&2; die "configure --host=$target failed (log: $dir/config.log)"; }
	(cd "$dir" && make -j"${JOBS:-2}" rbrecord >make.out 2>&1) ||
		{ tail -n 20 "$dir/make.out" >&2; die "make rbrecord for $target failed"; }
	if [ -n "$units" ]; then
		list=$(cd "$dir" && make -s --no-print-directory cross-units) || die "make cross-units failed in $dir"
		# shellcheck disable=SC2086
		(cd "$dir" && make -j"${JOBS:-2}" $list >>make.out 2>&1) ||
			{ tail -n 20 "$dir/make.out" >&2; die "building the unit tests for $target failed"; }
	fi
	echo "$dir/rbrecord"
}

cmd_run() {
	[ $# -ge 2 ] || die "run: TARGET PROGRAM missing"
	target=$1
	shift
	if native "$target"; then
		exec "$@"
	fi
	q=$(qemu_of "$target")
	[ -n "$q" ] || missing "no qemu-user mapping for $target"
	qemu=$(command -v "qemu-$q-static" || command -v "qemu-$q") ||
		missing "no qemu-$q-static (Debian package qemu-user-static)"
	# dynamic test programs find the target's loader and libc there (libc6-*-cross)
	QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/$target}
	export QEMU_LD_PREFIX
	exec "$qemu" "$@"
}

# --- barriers: source scan, disassembly / GIMPLE counts ---

# stdin: a C file; stdout: "FUNCTION ACQUIRES RELEASES" for functions naming __ATOMIC_ orders
# (this project's layout: a function's signature starts in column 0, its braces are in column 0)
scan_source() {
	sed -e 's|/\*.*\*/||g' -e 's|//.*||' -e '/^[[:space:]]*\*/d' | awk '
		/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { sig = $0 }
		/^\{/ { f = sig; sub(/\(.*/, "", f); n = split(f, w, /[ \t*]+/); f = w[n]; inside = 1; next }
		/^\}/ { inside = 0; next }
		inside { a = gsub(/__ATOMIC_ACQUIRE|__ATOMIC_SEQ_CST|__ATOMIC_ACQ_REL/, "&"); acq[f] += a
			 r = gsub(/__ATOMIC_RELEASE|__ATOMIC_SEQ_CST|__ATOMIC_ACQ_REL/, "&"); rel[f] += r
			 if (a + r) seen[f] = 1 }
		END { for (f in seen) print f, acq[f] + 0, rel[f] + 0 }'
}

# stdin: objdump -d --no-show-raw-insn; stdout: "FUNCTION ACQUIRE_FORMS RELEASE_FORMS" per function
count_forms() {
	awk -v kind="$1" '
		function flush() {
			if (f == "") return
			a = 0; r = 0
			for (i = 1; i <= n; i++) {
				m = mn[i]
				if (kind == "arm64") {
					if (m ~ /^(ldar|ldapr|ldaxr|ldapur)/ || (m == "dmb" && op[i] ~ /^ish(ld)?$/)) a++
					if (m ~ /^(stlr|stlxr|stlur)/ || (m == "dmb" && op[i] == "ish")) r++
				} else if (kind == "power") {
					if (m == "isync")   # ld; cmp; bne-; isync: a control dependency and isync
						for (j = i - 1; j >= i - 3 && j >= 1; j--) if (mn[j] ~ /^b(ne|eq)/) { a++; break }
					if (m == "lwsync" || m == "sync" || m == "hwsync") {
						nxt = ""
						for (j = i + 1; j <= n && mn[j] !~ /^b/; j++) if (mem(mn[j])) { nxt = mem(mn[j]); break }
						if (nxt == "st") r++        # barrier; store: a release store
						else if (nxt == "ld") a++   # barrier; load: an acquire fence
					}
				}
			}
			print f, a, r
			f = ""
		}
		function mem(m) {
			if (m ~ /^l(bz|hz|ha|wz|wa|d|fd|fs)/) return "ld"
			if (m ~ /^st(b|h|w|d|fd|fs)/) return "st"
			return ""
		}
		/^[0-9a-f]+ <.*>:$/ { flush(); f = $2; gsub(/[<>:]/, "", f); sub(/^\./, "", f); n = 0; next }
		/^[[:space:]]+[0-9a-f]+:/ && f != "" {
			line = $0; sub(/^[[:space:]]+[0-9a-f]+:[[:space:]]+/, "", line)
			split(line, w, /[[:space:]]+/); n++; mn[n] = w[1]; op[n] = w[2]
		}
		END { flush() }'
}

# stdin: gcc -fdump-tree-optimized; stdout: "FUNCTION ACQUIRE RELEASE" atomic builtins by memory order
# (GCC memory models: 2 acquire, 3 release, 4 acq_rel, 5 seq_cst)
count_gimple() {
	awk '
		/^;; Function / { if (f != "") print f, a, r; f = $3; a = 0; r = 0; next }
		/__atomic_load_[0-9]+ \(/ && /, [245]\);/ { a++ }
		/__atomic_store_[0-9]+ \(/ && /, [345]\);/ { r++ }
		/__atomic_thread_fence \([245]\);/ { a++ }
		/__atomic_thread_fence \([345]\);/ { r++ }
		END { if (f != "") print f, a, r }'
}

# The consumers whose barriers the protocol needs, whatever the source scan finds:
# FILE:FUNCTION:ACQUIRES:RELEASES (at least).
REQUIRED="ring.c:ring__consume:1:1 ring.c:ring__snapshot:1:0 auxring.c:aux__consume:1:1 auxring.c:aux__snapshot_read:1:0"

cmd_barriers() {
	[ $# -eq 2 ] || die "barriers: TARGET DIR"
	target=$1 dir=$2
	[ "$target" = native ] && target=$(${CC:-cc} -dumpmachine)
	case $target in
	aarch64-*) kind=arm64 ;;
	powerpc64*|powerpc-*) kind=power ;;
	x86_64-*) kind=x86 ;;
	*) missing "no barrier forms known for $target" ;;
	esac
	if native "$target"; then cc=${CC:-cc} objdump=objdump; else cc=$target-gcc objdump=$target-objdump; fi
	command -v "$cc" >/dev/null 2>&1 || missing "no compiler $cc"
	[ -f "$dir/config.h" ] || die "$dir is not a configured build (no config.h)"
	# scratch files go elsewhere: DIR may be a build tree that make distcheck checks is clean
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rbcross.XXXXXX") || die "mktemp failed"
	trap 'rm -rf "$tmp"' EXIT
	fail=0 checked=0
	for src in "$srcdir"/recorder/*.c; do
		grep -q '__ATOMIC_' "$src" || continue
		base=$(basename "$src" .c)
		scan_source <"$src" >"$tmp/$base.need"
		for req in $REQUIRED; do
			IFS=: read -r rf rfn ra rr <<EOF
$req
EOF
			[ "$rf" = "$base.c" ] || continue
			awk -v f="$rfn" -v a="$ra" -v r="$rr" '$1 == f && $2 >= a && $3 >= r { ok = 1 } END { exit !ok }' \
				"$tmp/$base.need" || { echo "$base.c: $rfn no longer uses __atomic acquire ($ra) / release ($rr)"; fail=1; }
		done
		# the compiler keeps the atomics and their order (the only check that means anything on x86)
		$cc -O2 -I"$dir" -I"$srcdir/perfdata" -I"$srcdir/recorder" -fdump-tree-optimized=stdout -S -o /dev/null \
			"$src" 2>/dev/null | count_gimple >"$tmp/$base.gimple"
		forms=
		if [ "$kind" != x86 ]; then
			obj=
			for o in "$dir/recorder/rbrecord-$base.o" "$dir/recorder/$base.o"; do
				[ -f "$o" ] && { obj=$o; break; }
			done
			[ -n "$obj" ] || die "no object for $src in $dir/recorder (build rbrecord first)"
			"$objdump" -d --no-show-raw-insn "$obj" | count_forms "$kind" >"$tmp/$base.forms"
			forms=forms
		fi
		for have in gimple $forms; do
			# per function; functions inlined away count in the file's total
			out=$(awk -v what="$have" -v file="$base.c" '
				NR == FNR { need_a[$1] = $2; need_r[$1] = $3; ta += $2; tr += $3; next }
				{ got_a[$1] = $2; got_r[$1] = $3; ga += $2; gr += $3 }
				END {
					bad = 0
					for (f in need_a) {
						if (!(f in got_a)) { printf "%s: %s: inlined, counted in the file total\n", file, f; continue }
						st = (got_a[f] >= need_a[f] && got_r[f] >= need_r[f]) ? "ok" : "MISSING"
						if (st != "ok") bad = 1
						printf "%s: %s %s: acquire %d of %d, release %d of %d: %s\n", file, f, what,
							got_a[f], need_a[f], got_r[f], need_r[f], st
					}
					if (ga < ta || gr < tr) { bad = 1
						printf "%s: %s total: acquire %d of %d, release %d of %d: MISSING\n", file, what, ga, ta, gr, tr }
					exit bad
				}' "$tmp/$base.need" "$tmp/$base.$have") || fail=1
			echo "$out"
			checked=$((checked + 1))
		done
	done
	[ "$checked" -gt 0 ] || { echo "no recorder source uses __atomic orders"; fail=1; }
	# the check can fail: ring.c with every order relaxed must show no acquire / release in ring__consume
	sed -e 's/__ATOMIC_ACQUIRE/__ATOMIC_RELAXED/g' -e 's/__ATOMIC_RELEASE/__ATOMIC_RELAXED/g' \
		"$srcdir/recorder/ring.c" >"$tmp/ring_relaxed.c"
	if [ "$kind" = x86 ]; then
		$cc -O2 -I"$dir" -I"$srcdir/perfdata" -I"$srcdir/recorder" -fdump-tree-optimized=stdout -S -o /dev/null \
			"$tmp/ring_relaxed.c" 2>/dev/null | count_gimple >"$tmp/ring_relaxed.counts"
	else
		$cc -O2 -I"$dir" -I"$srcdir/perfdata" -I"$srcdir/recorder" -c -o "$tmp/ring_relaxed.o" "$tmp/ring_relaxed.c" &&
			"$objdump" -d --no-show-raw-insn "$tmp/ring_relaxed.o" | count_forms "$kind" >"$tmp/ring_relaxed.counts"
	fi
	if awk '$1 == "ring__consume" && $2 == 0 && $3 == 0 { ok = 1 } END { exit !ok }' "$tmp/ring_relaxed.counts" 2>/dev/null; then
		echo "self-check: ring.c built with relaxed atomics shows no acquire / release in ring__consume"
	else
		echo "self-check FAILED: ring.c built with relaxed atomics still counts as ordered: $(grep '^ring__consume ' "$tmp/ring_relaxed.counts" 2>/dev/null)"
		fail=1
	fi
	return $fail
}

[ $# -ge 1 ] || die "usage: cross.sh build|barriers|run ..."
sub=$1
shift
case $sub in
build) cmd_build "$@" ;;
barriers) cmd_barriers "$@" ;;
run) cmd_run "$@" ;;
*) die "unknown command $sub (build, barriers, run)" ;;
esac
