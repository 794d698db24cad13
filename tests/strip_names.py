#!/usr/bin/env python3
"""strip_names.py - copy a perf.data (stdin to stdout) without what names its
events, so that a tracepoint's name can only come from the tracing data, as
in the pipe files of perf before 4.x (perfparser's probe.data.stream).
Pipe mode: the HEADER_FEATURE record of EVENT_DESC (feature 12) and the
EVENT_UPDATE records (78) are left out. File mode: the EVENT_DESC feature
(its bit in the header and its entry in the feature table; the sections
stay where they are). With --drop-tracing, the tracing data goes too (the
TRACING_DATA record and its payload; in file mode the TRACING_DATA feature).
With --drop-meta-info, simpleperf's META_INFO feature (129, whose
event_type_info names the events) goes too.
Little-endian files only (the ones perf writes here); anything it cannot
follow stops it with a message naming the offset."""
import struct
import sys

HEADER_TRACING_DATA, AUXTRACE, EVENT_UPDATE, HEADER_FEATURE = 66, 71, 78, 80
FEAT_TRACING_DATA, FEAT_EVENT_DESC, FEAT_SP_META_INFO = 1, 12, 129


def pipe_mode(d, out, drop_feats, drop_tracing):
	out.write(d[:16])
	at = 16
	while at < len(d):
		if len(d) - at < 8:
			sys.exit('strip_names.py: %d stray bytes at offset %d' % (len(d) - at, at))
		typ, _misc, size = struct.unpack_from('<IHH', d, at)
		if size < 8 or at + size > len(d):
			sys.exit('strip_names.py: record of type %d and size %d at offset %d does not fit' % (typ, size, at))
		extra = 0
		if typ == HEADER_TRACING_DATA:
			extra = struct.unpack_from('<I', d, at + 8)[0]
		elif typ == AUXTRACE:
			extra = struct.unpack_from('<Q', d, at + 8)[0]
		drop = typ == EVENT_UPDATE or (typ == HEADER_TRACING_DATA and drop_tracing) or \
			(typ == HEADER_FEATURE and struct.unpack_from('<Q', d, at + 8)[0] in drop_feats)
		if not drop:
			out.write(d[at:at + size + extra])
		at += size + extra


def file_mode(d, out, drop_feats):
	d = bytearray(d)
	data_off, data_size = struct.unpack_from('<QQ', d, 40)
	table = data_off + data_size
	bits = int.from_bytes(d[72:104], 'little')
	feats = [f for f in range(256) if bits >> f & 1]
	entries = [bytes(d[table + 16 * k:table + 16 * k + 16]) for k in range(len(feats))]
	if table + 16 * len(feats) > len(d):
		sys.exit('strip_names.py: the feature table at offset %d runs past the end' % table)
	kept = [(f, e) for f, e in zip(feats, entries) if f not in drop_feats]
	bits = sum(1 << f for f, _ in kept)
	d[72:104] = bits.to_bytes(32, 'little')
	d[table:table + 16 * len(feats)] = b''.join(e for _, e in kept) + bytes(16 * (len(feats) - len(kept)))
	out.write(bytes(d))


def main():
	drop_tracing = '--drop-tracing' in sys.argv[1:]
	d = sys.stdin.buffer.read()
	if len(d) < 16 or d[:8] != b'PERFILE2':
		sys.exit('strip_names.py: not a little-endian perf.data (magic PERFILE2)')
	drop_feats = {FEAT_EVENT_DESC} | ({FEAT_TRACING_DATA} if drop_tracing else set()) | \
		({FEAT_SP_META_INFO} if '--drop-meta-info' in sys.argv[1:] else set())
	if struct.unpack_from('<Q', d, 8)[0] == 16:
		pipe_mode(d, sys.stdout.buffer, drop_feats, drop_tracing)
	elif len(d) >= 104:
		file_mode(d, sys.stdout.buffer, drop_feats)
	else:
		sys.exit('strip_names.py: the header is cut off')


main()
