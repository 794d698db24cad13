#!/bin/sh
# dist_complete.sh - is every file git tracks in the release tarball?
#
#   scripts/dist_complete.sh TARBALL [SRCDIR]
#
# `make distcheck` proves the tarball builds, installs and passes its tests,
# but only for the files those tests happen to read; this compares the
# tarball's file list with `git ls-files` so a file added to git and
# forgotten in a Makefile's EXTRA_DIST / _SOURCES is named here. Files that
# belong to the repository only (CI entry point, .gitignore, placeholders)
# are listed below. Exit 0 and nothing printed when complete; exit 1 naming
# each missing file; exit 2 when there is no git checkout to compare with.
set -u
tarball=$1
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$tarball" ] || { echo "dist_complete: no tarball $tarball" >&2; exit 2; }
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "dist_complete: $src is not a git checkout" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
# the tarball's names without its top folder (rbtrace-X.Y.Z/)
tar -tzf "$tarball" | sed -e 's|^[^/]*/||' -e '/\/$/d' -e '/^$/d' | sort -u >"$tmp/dist" || exit 2
git -C "$src" ls-files | grep -v -x -e '.ci/run' -e '.gitignore' -e 'm4/.gitkeep' | sort -u >"$tmp/git"
comm -23 "$tmp/git" "$tmp/dist" >"$tmp/missing"
if [ -s "$tmp/missing" ]; then
	echo "dist_complete: $(wc -l <"$tmp/missing") tracked file(s) missing from $(basename "$tarball"):"
	sed 's/^/  /' "$tmp/missing"
	exit 1
fi
exit 0
