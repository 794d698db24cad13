#!/usr/bin/env python3
# aux_bytes.py PERF.DATA OUT: the AUX bytes of a one-queue recording (perf's
# 8-byte padding between chunks and a snapshot's repeat of the previous
# chunk's end dropped), as one stream, for the bare libipt loop (pt_bare.c)
# that pt.sh and scale.sh compare rbdecode with.
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, size = struct.unpack_from('<QQ', d, 40)
p, end, out, nxt = off, off + size, bytearray(), None
while p + 8 <= end:
    t, misc, sz = struct.unpack_from('<IHH', d, p)
    if t == 71:
        psize, aoff = struct.unpack_from('<QQ', d, p + 8)
        if nxt is not None and aoff < nxt:
            del out[len(out) - (nxt - aoff):]
        out += d[p + sz:p + sz + psize]
        nxt = aoff + psize
        p += sz + psize
    else:
        p += sz
open(sys.argv[2], 'wb').write(out)
