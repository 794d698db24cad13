#!/bin/sh
# test.sh - the whole test suite, as CI runs it: install what is missing, then
# build twice out of tree (plain, and with AddressSanitizer + UBSan) and run
# `make check` in both, then `make distcheck`. Ends with one line
# "N passed, N failed[, N skipped]" and exits non-zero on any failure.
#
#   scripts/test.sh            default suite
#   RB_FUZZ=1 scripts/test.sh  then a short fuzzing run: a clang --enable-fuzz
#                              build, `make fuzz` with FUZZ_SECONDS (default 30)
#                              per target; a finding counts as one failure
#   RB_QUICK=1 (fewer fault-injection and damaged-file variants) in the
#   sanitizer build; make distcheck builds, installs and uninstalls the
#   tarball and runs its unit tests and one test per kind of data the tests
#   read from the tree (DIST_TESTS), and scripts/dist_complete.sh checks the
#   tarball holds every file git tracks (the plain build runs every test in
#   full; a complete tarball with a passing sample is what distcheck adds)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh || { echo "dependency install failed"; echo "0 passed, 1 failed"; exit 1; }
export RB_FIXTURES="${RB_FIXTURES:-$(cd "$top/.." && pwd)/shared/fixtures}"
jobs=$(nproc)
[ -f config.status ] && make distclean >/dev/null 2>&1
autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0 skipped=0
count() {   # count BUILD_DIR: add its test results
	for trs in $(find "$1" -name '*.trs'); do
		p=$(grep -c '^:test-result: PASS' "$trs")
		f=$(grep -c -e '^:test-result: FAIL' -e '^:test-result: ERROR' -e '^:test-result: XPASS' "$trs")
		s=$(grep -c '^:test-result: SKIP' "$trs")
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	done
}
build() {   # build DIR QUICK CONFIGURE_ARGS...
	dir=$1 quick=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" -q "$@" && make -j"$jobs" >/dev/null) || {
		echo "build in $dir failed"
		failed=$((failed + 1))
		return 1
	}
	(cd "$dir" && RB_QUICK=$quick make -j"$jobs" check >/dev/null 2>&1)
	grep -h -E '^(FAIL|ERROR|XPASS)' "$dir"/test-suite.log 2>/dev/null | head -n 40
	count "$dir"
}

echo "== plain build"
build "$top/_build" ""
echo "== AddressSanitizer + UBSan build (RB_QUICK=1)"
build "$top/_build-san" 1 --enable-sanitizers
echo "== make distcheck"
units=$(cd "$top" && ls tests/unit/test_*.c | sed 's/\.c$//' | tr '\n' ' ')
DIST_TESTS="$units tests/cli.test tests/info_fixtures.test tests/cs_etm.test tests/queries.test tests/symdir.test
tests/folded.test tests/pt_kernel.test tests/rec_header.test tests/imc_perf.test tests/timeline.test"
if (cd "$top/_build" && RB_QUICK=1 make -j"$jobs" distcheck TESTS="$(echo $DIST_TESTS)" >"$top/_build/distcheck.log" 2>&1); then
	passed=$((passed + 1))
else
	tail -n 30 "$top/_build/distcheck.log"
	failed=$((failed + 1))
fi
echo "== the tarball holds every tracked file"
if [ -d "$top/.git" ] || [ -f "$top/.git" ]; then
	if sh "$top/scripts/dist_complete.sh" "$(ls "$top"/_build/rbtrace-*.tar.gz | head -n 1)" "$top"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
else
	echo "skipped: not a git checkout"
	skipped=$((skipped + 1))
fi
if [ "${RB_FUZZ:-0}" = 1 ]; then
	echo "== fuzzing (RB_FUZZ=1): each target for ${FUZZ_SECONDS:-30} s"
	dir=$top/_build-fuzz
	rm -rf "$dir"
	mkdir -p "$dir"
	if (cd "$dir" && "$top/configure" -q --enable-fuzz >/dev/null && make -j"$jobs" >/dev/null &&
		make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-30}"); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
fi
line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ]
