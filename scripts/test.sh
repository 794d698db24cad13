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
#   distcheck runs the suite again with RB_QUICK=1 (fewer damaged-file variants)
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
build() {   # build DIR CONFIGURE_ARGS...
	dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" -q "$@" && make -j"$jobs" >/dev/null) || {
		echo "build in $dir failed"
		failed=$((failed + 1))
		return 1
	}
	(cd "$dir" && make -j"$jobs" check >/dev/null 2>&1)
	grep -h -E '^(FAIL|ERROR|XPASS)' "$dir"/test-suite.log 2>/dev/null | head -n 40
	count "$dir"
}

echo "== plain build"
build "$top/_build"
echo "== AddressSanitizer + UBSan build"
build "$top/_build-san" --enable-sanitizers
echo "== make distcheck"
if (cd "$top/_build" && RB_QUICK=1 make -j"$jobs" distcheck >"$top/_build/distcheck.log" 2>&1); then
	passed=$((passed + 1))
else
	tail -n 30 "$top/_build/distcheck.log"
	failed=$((failed + 1))
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
