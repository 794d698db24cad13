#!/bin/sh
# fetch.sh [DEST] - build the corpus of public recordings that tests/corpus.test
# reads (default DEST: $RB_CORPUS, else /work/corpus), from
# tests/corpus/MANIFEST.tsv: every row names a file, the GitHub repository,
# path and commit it comes from, the repository's licence, the sha256 of the
# file as the test expects it and how it is made from the blob ("none": the
# blob itself; "qUncompress": perfparser keeps its recordings as Qt's
# qCompress output, a 4-byte big-endian length then a zlib stream).
#
# Each repository is cloned once, without blobs (git clone --filter=blob:none),
# into $CORPUS_GIT (default DEST/.git-cache); the blobs of the listed paths are
# fetched at the listed commits. CORPUS_MIRRORS=DIR reads DIR/OWNER+NAME/repo
# (any git directory holding the commits) instead of cloning. Needs git,
# python3, sha256sum and, to clone, network access. Exit 0 when every file is
# in place with its sha256; otherwise the files that failed are named.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
MANIFEST=${MANIFEST:-$top/tests/corpus/MANIFEST.tsv}
DEST=${1:-${RB_CORPUS:-/work/corpus}}
CACHE=${CORPUS_GIT:-$DEST/.git-cache}
mkdir -p "$DEST" || exit 1
bad=0

gitdir() {   # gitdir OWNER/NAME: a git directory that can show the repository's blobs
	key=$(echo "$1" | tr / +)
	if [ -n "${CORPUS_MIRRORS:-}" ] && [ -d "$CORPUS_MIRRORS/$key/repo" ]; then
		echo "$CORPUS_MIRRORS/$key/repo"
		return 0
	fi
	if [ ! -d "$CACHE/$key" ]; then
		mkdir -p "$CACHE"
		git clone -q --bare --filter=blob:none "https://github.com/$1" "$CACHE/$key" >&2 || return 1
	fi
	echo "$CACHE/$key"
}

while IFS='	' read -r file repo path commit licence sha transform; do
	case $file in '#'* | '') continue ;; esac
	out=$DEST/$file
	if [ -f "$out" ] && [ "$(sha256sum <"$out" | cut -d' ' -f1)" = "$sha" ]; then
		continue
	fi
	g=$(gitdir "$repo") || { echo "$file: cannot clone $repo" >&2; bad=$((bad + 1)); continue; }
	git -C "$g" cat-file -e "$commit" 2>/dev/null || git -C "$g" fetch -q origin "$commit" 2>/dev/null
	case $transform in
	none) git -C "$g" show "$commit:$path" >"$out.tmp" ;;
	qUncompress) git -C "$g" show "$commit:$path" |
		python3 -c 'import sys, zlib; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(zlib.decompress(d[4:]))' >"$out.tmp" ;;
	*) echo "$file: unknown transform '$transform'" >&2; false ;;
	esac
	if [ $? -eq 0 ] && [ "$(sha256sum <"$out.tmp" | cut -d' ' -f1)" = "$sha" ]; then
		mv "$out.tmp" "$out"
	else
		rm -f "$out.tmp"
		echo "$file: $repo@$commit:$path did not give sha256 $sha" >&2
		bad=$((bad + 1))
	fi
done <"$MANIFEST"
cp "$MANIFEST" "$DEST/MANIFEST.tsv"
[ $bad -eq 0 ] && echo "corpus complete in $DEST ($(grep -vc '^#' "$MANIFEST") files)"
[ $bad -eq 0 ]
