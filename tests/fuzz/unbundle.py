#!/usr/bin/env python3
"""unbundle.py BUNDLE DIR - write the files of a fuzz_cs_snapshot input (see
fuzz_cs_snapshot.c: an option byte, then "@@ NAME\\n" + bytes per file) into
DIR, as the fuzz target does, and print the option byte as rbdecode elements
flags."""
import os
import re
import sys

data = open(sys.argv[1], "rb").read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
opts, body = (data[0], data[1:]) if data else (0, b"")
if body.startswith(b"@@ "):
    parts = (b"\n" + body).split(b"\n@@ ")[1:]
    for part in parts:
        name, nl, content = part.partition(b"\n")
        if not nl:
            break
        n = name.decode("latin-1")
        if not n or len(n) > 200 or n.startswith("/") or ".." in n or not re.fullmatch(r"[A-Za-z0-9._/-]+", n):
            continue
        path = os.path.join(out, n)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
flags = []
if opts & 1:
    flags.append("--packets" if opts & 2 else "--pkt-mon")
if opts & 4:
    flags.append("--src-addr-n")
if opts & 8:
    flags.append("--multi-session")
if opts & 16:
    flags.append("--dstream-format")
print(" ".join(flags))
