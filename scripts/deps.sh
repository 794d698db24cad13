#!/bin/sh
# deps.sh - install the Debian 12 packages the build, the tests and the
# oracles need, if any is missing (with RB_FUZZ=1, also what the fuzz targets
# need). libqt5sql5-sqlite is only a Recommends of PySide2's QtSql, which
# --no-install-recommends skips: without it perf's export-to-sqlite.py fails
# with "Driver not loaded". Needs root (or sudo) for apt-get.
#
# Target machines (tests/cross.test): by default the short form, the
# big-endian ppc64 cross compiler and qemu-user (~50 MB to download);
# RB_CROSS=1 adds the aarch64 and ppc64le ones and qemu-user-static.
set -eu
PKGS="build-essential autoconf automake pkg-config
libipt-dev libopencsd-dev libopencsd-bin libcapstone-dev libsqlite3-dev
libarchive-dev libjansson-dev libzstd-dev libtraceevent-dev trace-cmd
linux-perf python3 python3-pyside2.qtsql libqt5sql5-sqlite sqlite3 valgrind
binutils-aarch64-linux-gnu
gcc-powerpc64-linux-gnu libc6-dev-ppc64-cross"
if [ "${RB_CROSS:-0}" = 1 ]; then
	PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
qemu-user-static"
fi
# the fuzz targets (scripts/test.sh with RB_FUZZ=1, configure --enable-fuzz): clang and libFuzzer
[ "${RB_FUZZ:-0}" = 1 ] && PKGS="$PKGS clang libclang-rt-14-dev"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
# either qemu-user flavour runs the cross-built tests
installed qemu-user || installed qemu-user-static || missing="$missing qemu-user"
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
