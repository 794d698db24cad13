/*
 * pd_simpleperf.c - the feature sections simpleperf (Android's profiler)
 * adds to perf.data: FILE (128), a symbol table per binary so a recording
 * can be read without the binaries, and META_INFO (129), key/value strings
 * of which event_type_info names the events (perf cannot read these files at
 * all: "incompatible file format"). Layouts from simpleperf's
 * record_file_format.h; payloads are little-endian, as simpleperf writes
 * them on every target. The walkers stop at the first malformed entry and
 * return how many entries they passed on, so a damaged section yields what
 * precedes the damage.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "pd_internal.h"

size_t pd_sp_meta_each(const uint8_t *d, size_t size, pd_sp_meta_fn fn, void *ctx)
{
	size_t n = 0;
	const char *p = (const char *)d, *end = p + size;
	while (p < end && *p) {
		const char *key = p, *kend = memchr(key, 0, (size_t)(end - key));
		if (!kend || kend + 1 >= end)
			break;
		const char *value = kend + 1, *vend = memchr(value, 0, (size_t)(end - value));
		if (!vend)
			break;
		if (fn)
			fn(ctx, key, value);
		n++;
		p = vend + 1;
	}
	return n;
}

/*
 * One FILE entry: u32 size of the rest, path NUL-terminated, u32 type,
 * u64 min_vaddr, u32 symbol count, symbols {u64 start, u32 len, name NUL};
 * newer simpleperf appends fields after the symbols, which the size skips.
 */
size_t pd_sp_file_each(const uint8_t *d, size_t size, pd_sp_file_fn fn, void *ctx)
{
	size_t n = 0;
	for (size_t at = 0; size - at >= 4;) {
		uint32_t len = ld32(d + at);
		if (len > size - at - 4)
			break;
		const uint8_t *p = d + at + 4, *end = p + len;
		const uint8_t *nul = memchr(p, 0, len);
		if (!nul || end - (nul + 1) < 16)
			break;
		struct pd_sp_file f = { .path = (const char *)p };
		p = nul + 1;
		f.type = ld32(p);
		f.min_vaddr = ld64(p + 4);
		f.nr_symbols = ld32(p + 12);
		p += 16;
		for (uint32_t i = 0; i < f.nr_symbols; i++) {
			if (end - p < 13 || !(nul = memchr(p + 12, 0, (size_t)(end - p - 12))))
				return n;
			p = nul + 1;
		}
		if (fn)
			fn(ctx, &f);
		n++;
		at += 4 + (size_t)len;
	}
	return n;
}

const char *pd_sp_file_type_name(uint32_t type)
{
	static const char *const names[] = { "kernel", "kernel module", "elf", "dex", "symbol map", "unknown" };
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

struct name_lookup {
	uint32_t type;
	uint64_t config;
	char *buf;
	size_t n;
	int found;
};

/* event_type_info: lines "name,type,config" (decimal) */
static void find_event(void *ctx, const char *key, const char *value)
{
	struct name_lookup *q = ctx;
	if (q->found || strcmp(key, "event_type_info"))
		return;
	for (const char *line = value; *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c2 = memrchr(line, ',', len);
		const char *c1 = c2 ? memrchr(line, ',', (size_t)(c2 - line)) : NULL;
		if (c1 && (size_t)(c1 - line) < q->n) {
			char *e1, *e2;
			unsigned long type = strtoul(c1 + 1, &e1, 10);
			unsigned long long config = strtoull(c2 + 1, &e2, 10);
			if (e1 == c2 && e2 == line + len && type == q->type && config == q->config) {
				memcpy(q->buf, line, (size_t)(c1 - line));
				q->buf[c1 - line] = '\0';
				q->found = 1;
				return;
			}
		}
		line += len + (eol ? 1 : 0);
	}
}

const char *pd_sp_event_name(const uint8_t *meta, size_t size, uint32_t type, uint64_t config, char *buf,
			     size_t n)
{
	struct name_lookup q = { type, config, buf, n, 0 };
	if (!n)
		return NULL;
	pd_sp_meta_each(meta, size, find_event, &q);
	return q.found ? buf : NULL;
}
