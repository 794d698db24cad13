#!/bin/sh
# deps.sh - install the Debian 12 packages the build, the tests and the
# oracles need, if any is missing (with RB_FUZZ=1, also what the fuzz targets
# need). Needs root (or sudo) for apt-get.
set -eu
PKGS="build-essential autoconf automake pkg-config
libipt-dev libopencsd-dev libopencsd-bin libcapstone-dev libsqlite3-dev
libarchive-dev libjansson-dev libzstd-dev
linux-perf python3 python3-pyside2.qtsql sqlite3 valgrind"
# the fuzz targets (scripts/test.sh with RB_FUZZ=1, configure --enable-fuzz): clang and libFuzzer
[ "${RB_FUZZ:-0}" = 1 ] && PKGS="$PKGS clang libclang-rt-14-dev"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
