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
else
	[ "$OUT" = "$SRC" ] || cp "$SRC"/flows/*.flow "$OUT/flows/"
fi
grep -v '^#' "$SRC/fixtures.list" | while read -r name variant prog; do
	[ -n "$name" ] || continue
	rm -rf "${OUT:?}/$name"
	"$PTGEN" fixture "$variant" "$SRC/rbfix/$prog" "$OUT/flows/$prog.flow" "$prog" "$OUT/$name"
done
