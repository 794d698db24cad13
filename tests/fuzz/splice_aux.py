#!/usr/bin/env python3
# splice_aux.py TEMPLATE PAYLOAD OUT: the recording fuzz_trace.c runs for an
# input: TEMPLATE (a native-endian perf.data) with its largest AUXTRACE
# payload replaced by PAYLOAD, cut or padded with zeros to the payload's size
# (so that the AUX records keep pointing into it). fuzz_regress.test replays
# the trace_pt / trace_cs corpora through rbdecode with it.
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
new = open(sys.argv[2], 'rb').read()
off, size = struct.unpack_from('<QQ', d, 40)
p, end, best = off, off + size, (0, 0)
while p + 8 <= end:
    t, misc, sz = struct.unpack_from('<IHH', d, p)
    if sz < 8:
        sys.exit('%s: a record of size %d at offset %d' % (sys.argv[1], sz, p))
    extra = struct.unpack_from('<Q', d, p + 8)[0] if t == 71 else 0
    if extra > best[1]:
        best = (p + sz, extra)
    p += sz + extra
at, n = best
if not n:
    sys.exit('%s: no AUXTRACE payload' % sys.argv[1])
d[at:at + n] = (new[:n] + bytes(n - min(n, len(new))))
open(sys.argv[3], 'wb').write(d)
