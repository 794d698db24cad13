#!/bin/sh
# build.sh - rebuild the fixture programs (not part of make: the committed
# binaries are what the committed perf.data files were made from; a different
# compiler gives different addresses and different fixtures).
set -e
cd "$(dirname "$0")"
OUT=../../../tests/fixtures/intel-pt-gen/rbfix
CFLAGS="-O2 -static -nostdlib -fno-pie -no-pie -fno-stack-protector -fcf-protection=none \
 -fno-asynchronous-unwind-tables -fno-omit-frame-pointer -Wl,--build-id=sha1 -Wl,-z,noexecstack"
for p in ${*:-loops threads ptw}; do
	gcc $CFLAGS -o "$OUT/$p" "$p.c"
done
# the stand-in kernel of the "kernel" variant, at the kernel text address
KFLAGS="-nostdlib -static -no-pie -Wl,--build-id=sha1 -Wl,-T,kmini.ld -Wl,-z,noexecstack -Wl,-z,max-page-size=0x1000"
gcc $KFLAGS -o "$OUT/kmini" kmini.S
gcc $KFLAGS -DKMOD -o "$OUT/kmini-mod" kmini.S
