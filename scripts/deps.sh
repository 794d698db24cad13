#!/bin/sh
# deps.sh - install the Debian 12 packages the build, the tests and the
# oracles need, if any is missing (with RB_FUZZ=1, also what the fuzz targets
# need). libqt5sql5-sqlite is only a Recommends of PySide2's QtSql, which
# --no-install-recommends skips: without it perf's export-to-sqlite.py fails
# with "Driver not loaded". Needs root (or sudo) for apt-get.
#
# PostgreSQL (rbdecode -o postgresql://...): libpq-dev to build it, the
# postgresql-15 server that tests/postgresql.test starts in a temporary
# folder, and Qt's PostgreSQL driver (libqt5sql5-psql) for perf's
# export-to-postgresql.py.
#
# libdw-dev (elfutils): rbdecode unwinds --call-graph dwarf user stacks with it.
#
# The browser tests (tests/speedscope.test) need Debian's chromium, node and
# npm, and two npm packages, puppeteer-core (drives chromium) and speedscope
# (the app and its file-format schema), installed into tests/npm/node_modules
# (not committed; versions in tests/npm/package.json). npm is left out when a
# node with npm is already there (nodesource's nodejs brings its own).
#
# Target machines (tests/cross.test): by default the short form, the
# big-endian ppc64 cross compiler and qemu-user (~50 MB to download);
# RB_CROSS=1 adds the aarch64 and ppc64le ones and qemu-user-static.
set -eu
PKGS="build-essential autoconf automake pkg-config
libipt-dev libopencsd-dev libopencsd-bin libcapstone-dev libsqlite3-dev
libarchive-dev libjansson-dev libzstd-dev libtraceevent-dev libdw-dev trace-cmd
linux-perf python3 python3-pyside2.qtsql libqt5sql5-sqlite sqlite3 valgrind strace
python3-jsonschema chromium
libpq-dev postgresql-15 libqt5sql5-psql
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
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
	echo "installing:$missing"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# the browser tests' npm packages (a failure only makes those tests skip, naming what is missing)
NPM_DIR=$(dirname "$0")/../tests/npm
if [ ! -d "$NPM_DIR/node_modules/speedscope" ] || [ ! -d "$NPM_DIR/node_modules/puppeteer-core" ]; then
	echo "installing npm packages into $NPM_DIR/node_modules: puppeteer-core speedscope"
	# three tries: the registry now and then drops a connection mid-install (seen in a CI run)
	tries=0
	until PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent >"$NPM_DIR/install.log" 2>&1; do
		tries=$((tries + 1))
		if [ "$tries" -ge 3 ]; then
			echo "npm install failed 3 times: the browser tests will skip ($(tail -n 1 "$NPM_DIR/install.log"))"
			break
		fi
		sleep 5
	done
fi
exit 0
