/*
 * ftpage.c - see ftpage.h. Stage: the innermost loop of reading a
 * trace.dat, once per page of every CPU. Facts used (the kernel's
 * ring_buffer.c and its header_event description):
 *   - an event header is one u32: type_len in its low 5 bits and time_delta
 *     in the high 27 on a little-endian host (the reverse on big endian);
 *   - data events add time_delta to the running time, which starts at the
 *     page's timestamp; type_len 1..28 carry type_len * 4 bytes; type_len 0
 *     carries its length (including that length word) in the next u32;
 *   - padding (29) with time_delta 0 ends the page's events; otherwise its
 *     next u32 is the bytes it covers after the header, and its delta counts;
 *   - a time extend (30) adds (array[0] << 27) + time_delta; an absolute
 *     timestamp (31) sets the time to (array[0] << 27) | time_delta, whose
 *     top 5 bits the kernel leaves out (they come from the running time,
 *     plus one 2^59 step if the low bits wrapped);
 *   - commit bit 31: events were missed before the page; bit 30: their count
 *     is stored, as a kernel long, right after the last event.
 * Never prints; never reads outside the page it is given.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ftpage.h"

#define TS_SHIFT 27
#define TS_MSB (0xf8ULL << 56)

static uint32_t rd32(const uint8_t *p, int be) { return (uint32_t)rb_ft_load(p, 4, be); }
static uint64_t rd64(const uint8_t *p, int be) { return rb_ft_load(p, 8, be); }

static uint64_t rdlong(const uint8_t *p, uint32_t size, int be)
{
	return size == 8 ? rd64(p, be) : rd32(p, be);
}

/* "field: ... NAME;\toffset:N;\tsize:M;" -> N and M for the first field whose declaration ends in NAME. */
static int field_of(const char *text, size_t len, const char *name, unsigned *offset, unsigned *size)
{
	size_t k = strlen(name);
	for (size_t i = 0; i + k + 1 < len; i++) {
		if (memcmp(text + i, name, k) || text[i + k] != ';' || (i && text[i - 1] != ' ' && text[i - 1] != '\t'))
			continue;
		const char *o = NULL, *s = NULL;
		for (size_t j = i; j + 5 < len && text[j] != '\n'; j++) {
			if (!o && !memcmp(text + j, "offset:", 7))
				o = text + j + 7;
			if (!s && !memcmp(text + j, "size:", 5))
				s = text + j + 5;
		}
		if (!o || !s)
			return -1;
		*offset = (unsigned)strtoul(o, NULL, 10);
		*size = (unsigned)strtoul(s, NULL, 10);
		return 0;
	}
	return -1;
}

int rb_ftpage_layout_parse(struct rb_ftpage_layout *l, const char *hp, size_t len, uint32_t page_size,
			   int big_endian)
{
	unsigned co, cs, dofs, ds;
	memset(l, 0, sizeof(*l));
	if (!hp || field_of(hp, len, "commit", &co, &cs) < 0 || field_of(hp, len, "data", &dofs, &ds) < 0)
		return -1;
	if ((cs != 4 && cs != 8) || co != 8 || dofs < co + cs || dofs >= page_size)
		return -1;
	l->page_size = page_size;
	l->commit_size = cs;
	l->data_offset = dofs;
	l->big_endian = big_endian;
	return 0;
}

int rb_ftpage_parse(const struct rb_ftpage_layout *l, const uint8_t *page, size_t len,
		    struct rb_ftpage_info *info, rb_ftpage_event_fn fn, void *ctx)
{
	int be = l->big_endian;
	memset(info, 0, sizeof(*info));
	if (len > l->page_size)
		len = l->page_size;
	if (len < l->data_offset) {
		info->damaged = 1;
		return 0;
	}
	info->timestamp = rd64(page, be);
	uint64_t commit = rdlong(page + 8, l->commit_size, be);
	/* the flags sit in the low 32 bits of the commit word whatever its size */
	uint64_t size = commit & RB_FTPAGE_COMMIT_MASK;
	const uint8_t *data = page + l->data_offset;
	size_t room = len - l->data_offset;
	if (size > room) {
		info->damaged = 1;
		info->commit_overflow = 1;
		info->damaged_at = (uint32_t)len;
		size = room;
	}
	info->size = (uint32_t)size;
	if (commit & RB_FTPAGE_MISSED_EVENTS) {
		info->missed = 1;
		info->missed_count = -1;
		if ((commit & RB_FTPAGE_MISSED_STORED) && size + l->commit_size <= room)
			info->missed_count = (int64_t)rdlong(data + size, l->commit_size, be);
	}
	uint64_t ts = info->timestamp;
	uint32_t pos = 0;
	while (pos + 4 <= size) {
		uint32_t h = rd32(data + pos, be);
		uint32_t type_len = be ? h >> 27 : h & 31;
		uint32_t delta = be ? h & ((1u << 27) - 1) : h >> 5;
		uint32_t total, dlen, doff;
		switch (type_len) {
		case RB_FT_PADDING:
			if (delta == 0)
				return 0;        /* the rest of the page is unused */
			if (pos + 8 > size)
				goto damaged;
			total = 4 + rd32(data + pos + 4, be);
			if (total < 8 || total > size - pos)
				goto damaged;
			ts += delta;
			pos += total;
			continue;
		case RB_FT_TIME_EXTEND:
		case RB_FT_TIME_STAMP:
			if (pos + 8 > size)
				goto damaged;
			if (type_len == RB_FT_TIME_EXTEND) {
				ts += ((uint64_t)rd32(data + pos + 4, be) << TS_SHIFT) + delta;
			} else {
				uint64_t abs = ((uint64_t)rd32(data + pos + 4, be) << TS_SHIFT) | delta;
				if (ts & TS_MSB) {
					abs |= ts & TS_MSB;
					if (abs < ts)
						abs += 1ULL << 59;   /* the low bits wrapped */
				}
				ts = abs;
			}
			pos += 8;
			continue;
		case 0:
			if (pos + 8 > size)
				goto damaged;
			dlen = rd32(data + pos + 4, be);
			if (dlen < 4)
				goto damaged;
			dlen -= 4;
			doff = pos + 8;
			total = 8 + ((dlen + 3) & ~3u);
			break;
		default:
			dlen = type_len * 4;
			doff = pos + 4;
			total = 4 + dlen;
			break;
		}
		if (total > size - pos || dlen > size - (doff - 0) || doff + dlen > size)
			goto damaged;
		ts += delta;
		info->events++;
		int rc = fn ? fn(ctx, ts, data + doff, dlen, l->data_offset + doff) : 0;
		if (rc)
			return rc;
		pos += total;
	}
	return 0;
damaged:
	info->damaged = 1;
	info->damaged_at = l->data_offset + pos;
	return 0;
}
