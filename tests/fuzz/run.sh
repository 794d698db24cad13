#!/bin/sh
# run.sh - `make fuzz`: build the seed corpora (seeds.sh) and run each fuzz
# target for FUZZ_SECONDS, one after the other (one job: the machines this
# runs on are shared). The corpus each target grows is kept in the build
# tree (tests/fuzz/corpus/TARGET) so that the next run starts from it; a
# crash leaves its input as tests/fuzz/artifacts/TARGET-crash-*.
#   FUZZ_SECONDS (60)  seconds per target
#   FUZZ_TARGETS       some of: perfdata rbdecode unpack cs_snapshot imc symtab trace_pt trace_cs rbtrace
#   FUZZ_ARGS          more libFuzzer options
# Exit status 1 if any target found something.
set -u
bld=${top_builddir:-.}
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-perfdata rbdecode unpack cs_snapshot imc symtab trace_pt trace_cs rbtrace}
fz=$bld/tests/fuzz
sh "${top_srcdir:-.}/tests/fuzz/seeds.sh" "$fz/seeds" || exit 1
mkdir -p "$fz/artifacts"
# fuzz_rbtrace's databases, and the recordings they name (which must stay where they are): two
# fixtures (small: quick inputs; two CPUs), ptgen's 1 MB one-queue trace exported in 4 KiB segments
# (seek points in trace_seek) and a 4-CPU thread-per-run one
case " $targets " in *" rbtrace "*)
	pt=$(cd "${top_srcdir:-.}/tests/fixtures/intel-pt-gen" && pwd)
	db=$fz/rbtrace-db
	mkdir -p "$db"
	FUZZ_RBTRACE_DBS=
	for n in loops-full threads-2cpu; do
		"$bld/rbdecode" "$pt/$n/perf.data" --symfs "$pt" -q -f -o "$db/$n.db" || exit 1
		FUZZ_RBTRACE_DBS=$FUZZ_RBTRACE_DBS${FUZZ_RBTRACE_DBS:+:}$db/$n.db
	done
	for shape in "1" "4 threads"; do
		n=$(echo "$shape" | tr ' ' '-')
		# shellcheck disable=SC2086
		"$bld/scripts/ptgen/ptgen" large "$pt/rbfix/loops" "$pt/flows/loops.flow" 1 "$db/$n.data" $shape >/dev/null &&
			RBDECODE_PT_SEGMENT=4096 "$bld/rbdecode" "$db/$n.data" --symfs "$pt" -q -f -o "$db/$n.db" || exit 1
		FUZZ_RBTRACE_DBS=$FUZZ_RBTRACE_DBS${FUZZ_RBTRACE_DBS:+:}$db/$n.db
	done
	export FUZZ_RBTRACE_DBS ;;
esac
export LSAN_OPTIONS="suppressions=${top_srcdir:-.}/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
status=0
for t in $targets; do
	mkdir -p "$fz/corpus/$t"
	echo "== fuzz_$t for $secs s"
	# -close_fd_mask=3: the code under test prints; libFuzzer keeps its own report. fuzz_rbtrace's
	# inputs are short programs (a few executions a second: each decodes): long ones from the start
	len="-max_len=262144"
	[ "$t" = rbtrace ] && len="-max_len=512 -len_control=0"
	# shellcheck disable=SC2086
	if "$fz/fuzz_$t" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 $len \
		-close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$fz/artifacts/$t-" ${FUZZ_ARGS:-} \
		"$fz/corpus/$t" "$fz/seeds/$t" >"$fz/fuzz_$t.log" 2>&1; then
		grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$fz/fuzz_$t.log" | tr '\n' ' '
		echo
	else
		status=1
		echo "fuzz_$t FAILED: see $fz/fuzz_$t.log and $fz/artifacts/"
		grep -E 'ERROR|SUMMARY|Test unit written' "$fz/fuzz_$t.log" | head -n 5
	fi
done
exit $status
