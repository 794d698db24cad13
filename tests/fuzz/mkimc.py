#!/usr/bin/env python3
"""mkimc.py OUTDIR - seed inputs for fuzz_imc: 32 option bytes (flags, time
base frequency, anchor pair; see fuzz_imc.c) then a trace-imc buffer of
64-byte big-endian records (tb1, ip, val, cpmc1-4, tb2 = tb1's low 42 bits):
in order, wrapped, with bad records, and with a partial record at the end."""
import os
import struct
import sys

MASK = (1 << 42) - 1


def rec(tb, ip, val=0, bad=False):
    tb2 = (tb & MASK) ^ (1 if bad else 0)
    return struct.pack(">8Q", tb, ip, val, 1, 2, 3, 4, tb2)


def opts(flags, hz=512000000, anchor_tb=0, anchor_ns=0):
    return struct.pack("<B7xQQQ", flags, hz, anchor_tb, anchor_ns)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    base = 0x123456789
    linear = b"".join(rec(base + 16 * i, 0xc000000000001000 + 4 * i, (i % 4) << 62) for i in range(32))
    wrapped = b"".join(rec(base + 16 * (i + 32 if i < 10 else i), 0x10000000 + 4 * i) for i in range(32))
    bad = b"".join(rec(base + 16 * i, 0x2000 + 4 * i, bad=(i in (3, 4, 17))) for i in range(24))
    seeds = {
        "linear-p9": opts(0) + linear,
        "linear-p10-hz": opts(3, 512000000, base, 10**9) + linear,
        "wrapped": opts(4) + wrapped,
        "bad-records": opts(1) + bad,
        "partial-tail": opts(6, 0, base, 5) + linear[:64 * 5 + 23],
        "zeros": opts(0) + bytes(64 * 4),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


main()
