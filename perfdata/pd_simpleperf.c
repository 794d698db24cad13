/*
 * pd_simpleperf.c - the feature sections simpleperf (Android's profiler)
 * adds to perf.data: FILE (128), a symbol table per binary so a recording
 * can be read without the binaries, and META_INFO (129), key/value strings
 * of which event_type_info names the events (perf cannot read these files at
 * all: "incompatible file format"). Layouts from simpleperf's
 * record_file_format.h; payloads are little-endian, as simpleperf writes
 * them on every target. FILE2 (132), which replaced FILE in 2021, holds
 * the same tables as protobuf messages (record_file.proto), read here by a
 * small wire-format reader. The walkers stop at the first malformed entry
 * and return how many entries they passed on, so a damaged section yields
 * what precedes the damage.
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

/* ------------------------------------------------------------ FILE (128) */

/* Where a malformed entry stops the walk: the feature, the entry's file offset, what is wrong. */
static void bad_entry(struct pd_error *err, unsigned feat, uint64_t offset, const char *what)
{
	pd_fail_feature(err, PD_ERR_FEATURE, offset, feat, "feature %s (%u): entry at offset %llu: %s; the entries after it are not read",
			pd_feature_name(feat), feat, (unsigned long long)offset, what);
}

/*
 * One FILE entry, as simpleperf's writer lays it out (record_file_writer.cpp
 * until 2021, record_file_reader.cpp's ReadFileV1Feature): u32 size of the
 * rest; path NUL-terminated; u32 type; u64 min_vaddr; u32 symbol count;
 * symbols {u64 vaddr, u32 len, name NUL-terminated}; then for a dex file
 * u32 count and that many u64 dex file offsets, for an ELF file or a kernel
 * module (when the writer was new enough to add it) u64
 * file_offset_of_min_vaddr (the module's memory offset of it); nothing else.
 * Returns NULL when well formed, else what is wrong.
 */
static const char *file_v1(const uint8_t *p, const uint8_t *end, struct pd_sp_file *f)
{
	const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
	if (!nul)
		return "its path has no terminating NUL";
	f->path = (const char *)p;
	p = nul + 1;
	if (end - p < 16)
		return "it ends before its type, min_vaddr and symbol count";
	f->type = ld32(p);
	f->min_vaddr = ld64(p + 4);
	f->nr_symbols = ld32(p + 12);
	p += 16;
	if (f->type > PD_SP_DSO_UNKNOWN)
		return "unknown file type (simpleperf's DsoType goes to 5)";
	f->syms = p;
	for (uint32_t i = 0; i < f->nr_symbols; i++) {
		if (end - p < 13 || !(nul = memchr(p + 12, 0, (size_t)(end - p - 12))))
			return "a symbol does not fit in it";
		p = nul + 1;
	}
	f->syms_size = (size_t)(p - f->syms);
	if (f->type == PD_SP_DSO_DEX) {
		if (end - p < 4)
			return "it ends before its dex file offset count";
		f->nr_dex_offsets = ld32(p);
		p += 4;
		if ((uint64_t)(end - p) / 8 < f->nr_dex_offsets)
			return "its dex file offsets do not fit in it";
		p += 8 * (size_t)f->nr_dex_offsets;
	}
	if ((f->type == PD_SP_DSO_ELF || f->type == PD_SP_DSO_KERNEL_MODULE) && p < end) {
		if (end - p < 8)
			return "its file_offset_of_min_vaddr does not fit in it";
		f->offset_of_min_vaddr = ld64(p);
		p += 8;
	}
	return p == end ? NULL : "bytes are left after its last field";
}

/* ----------------------------------------------------------- FILE2 (132) */

/*
 * The protobuf wire format, as much of it as record_file.proto's
 * FileFeature needs: varints, fixed 32 and 64-bit values, length-delimited
 * fields; groups (deprecated, never written by simpleperf) are malformed.
 */
struct pb {
	const uint8_t *p, *end;
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (b->p == b->end)
			return -1;
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;                      /* more than ten bytes */
}

struct pb_field {
	uint64_t number;
	unsigned wire;                  /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
	uint64_t v;                     /* wire 0, 1, 5 */
	struct pb sub;                  /* wire 2 */
};

/* The next field: 1, 0 at the end of the message, -1 if malformed. */
static int pb_next(struct pb *b, struct pb_field *fl)
{
	uint64_t key;
	if (b->p == b->end)
		return 0;
	if (pb_varint(b, &key) < 0 || !(fl->number = key >> 3))
		return -1;
	fl->wire = key & 7;
	switch (fl->wire) {
	case 0:
		return pb_varint(b, &fl->v) < 0 ? -1 : 1;
	case 1:
		if (b->end - b->p < 8)
			return -1;
		fl->v = ld64(b->p);
		b->p += 8;
		return 1;
	case 5:
		if (b->end - b->p < 4)
			return -1;
		fl->v = ld32(b->p);
		b->p += 4;
		return 1;
	case 2: {
		uint64_t len;
		if (pb_varint(b, &len) < 0 || len > (uint64_t)(b->end - b->p))
			return -1;
		fl->sub = (struct pb){ b->p, b->p + len };
		b->p += len;
		return 1;
	}
	default:
		return -1;
	}
}

/* FileFeature.Symbol {1 vaddr, 2 len, 3 name}: 0, or -1 if malformed. */
static int pb_symbol(struct pb b, struct pd_sp_symbol *s)
{
	struct pb_field fl;
	int r;
	*s = (struct pd_sp_symbol){ .name = "" };
	while ((r = pb_next(&b, &fl)) > 0) {
		if (fl.number == 1 && fl.wire == 0)
			s->vaddr = fl.v;
		else if (fl.number == 2 && fl.wire == 0)
			s->len = (uint32_t)fl.v;
		else if (fl.number == 3 && fl.wire == 2) {
			s->name = (const char *)fl.sub.p;
			s->name_len = (size_t)(fl.sub.end - fl.sub.p);
		}
	}
	return r;
}

/* A message whose field 1 is a uint64 (ElfFile, KernelModule) or repeated uint64 (DexFile): adds to *@nr. */
static int pb_u64s(struct pb b, uint64_t *last, uint32_t *nr)
{
	struct pb_field fl;
	int r;
	while ((r = pb_next(&b, &fl)) > 0) {
		if (fl.number != 1)
			continue;
		if (fl.wire == 0) {
			*last = fl.v;
			++*nr;
		} else if (fl.wire == 2) {      /* packed */
			for (uint64_t v; fl.sub.p < fl.sub.end; ++*nr, *last = v)
				if (pb_varint(&fl.sub, &v) < 0)
					return -1;
		}
	}
	return r;
}

/*
 * One FileFeature message (record_file.proto): 1 path, 2 type, 3 min_vaddr,
 * 4 symbols, and one of 5 dex_file, 6 elf_file, 7 kernel_module, which
 * simpleperf's reader requires for those types. Fields it does not know are
 * skipped, as protobuf does. The path is copied with its NUL into @buf
 * (@bufsize bytes) when it fits, else into *@path (malloc'ed; f->path stays
 * NULL when that fails). NULL when well formed, else what is wrong.
 */
static const char *file_v2(const uint8_t *p, const uint8_t *end, struct pd_sp_file *f, char *buf, size_t bufsize,
			   char **path)
{
	struct pb b = { p, end };
	struct pb_field fl;
	struct pd_sp_symbol s;
	uint64_t which = 0, value = 0;
	uint32_t nr = 0;
	const uint8_t *pp = (const uint8_t *)"", *pend = pp;
	int r;
	f->syms = p;
	f->syms_size = (size_t)(end - p);
	f->proto = 1;
	while ((r = pb_next(&b, &fl)) > 0) {
		if (fl.number == 1 && fl.wire == 2) {
			pp = fl.sub.p;
			pend = fl.sub.end;
		} else if (fl.number == 2 && fl.wire == 0) {
			f->type = (uint32_t)fl.v;
		} else if (fl.number == 3 && fl.wire == 0) {
			f->min_vaddr = fl.v;
		} else if (fl.number == 4 && fl.wire == 2) {
			if (pb_symbol(fl.sub, &s) < 0)
				return "a symbol message is malformed";
			f->nr_symbols++;
		} else if (fl.number >= 5 && fl.number <= 7 && fl.wire == 2) {
			if (which != fl.number) {   /* another member of the oneof clears the one before */
				value = 0;
				nr = 0;
			}
			which = fl.number;
			if (pb_u64s(fl.sub, &value, &nr) < 0)
				return "its dex_file, elf_file or kernel_module message is malformed";
		}
	}
	if (r < 0)
		return "its protobuf message is malformed";
	if (f->type > PD_SP_DSO_UNKNOWN)
		return "unknown file type (simpleperf's DsoType goes to 5)";
	if ((f->type == PD_SP_DSO_DEX && which != 5) || (f->type == PD_SP_DSO_ELF && which != 6) ||
	    (f->type == PD_SP_DSO_KERNEL_MODULE && which != 7))
		return "it lacks the dex_file, elf_file or kernel_module message its type needs";
	if (f->type == PD_SP_DSO_DEX)
		f->nr_dex_offsets = nr;
	else if (f->type == PD_SP_DSO_ELF || f->type == PD_SP_DSO_KERNEL_MODULE)
		f->offset_of_min_vaddr = value;
	if (memchr(pp, 0, (size_t)(pend - pp)))
		return "its path holds a NUL";
	size_t len = (size_t)(pend - pp);
	char *copy = len < bufsize ? buf : (*path = malloc(len + 1));
	if (!copy)
		return NULL;
	memcpy(copy, pp, len);
	copy[len] = 0;
	f->path = copy;
	return NULL;
}

size_t pd_sp_file_each(unsigned feat, const uint8_t *d, size_t size, uint64_t base, pd_sp_file_fn fn,
		       void *ctx, struct pd_error *err)
{
	size_t n = 0;
	pd_error_clear(err);
	for (size_t at = 0; at < size;) {
		uint64_t offset = base + at;
		if (size - at < 4) {
			bad_entry(err, feat, offset, "it ends inside its size field");
			break;
		}
		uint32_t len = ld32(d + at);
		if (len > size - at - 4) {
			bad_entry(err, feat, offset, "its size runs past the end of the feature");
			break;
		}
		struct pd_sp_file f = { .offset = offset, .offset_of_min_vaddr = PD_SP_NO_OFFSET };
		char *path = NULL, buf[4096];
		const uint8_t *p = d + at + 4;
		const char *why = feat == PD_FEAT_SP_FILE2 ? file_v2(p, p + len, &f, buf, sizeof(buf), &path) :
				  file_v1(p, p + len, &f);
		if (why) {
			bad_entry(err, feat, offset, why);
			break;
		}
		if (!f.path) {
			pd_fail_feature(err, PD_ERR_NOMEM, offset, feat, "feature %s (%u): out of memory", pd_feature_name(feat), feat);
			break;
		}
		if (fn)
			fn(ctx, &f);
		free(path);
		n++;
		at += 4 + (size_t)len;
	}
	return n;
}

size_t pd_sp_files(const struct pd_reader *r, pd_sp_file_fn fn, void *ctx, struct pd_error *err)
{
	const uint8_t *d;
	size_t size;
	uint64_t offset;
	pd_error_clear(err);
	if (pd_reader_feature(r, PD_FEAT_SP_FILE, &d, &size, &offset))
		return pd_sp_file_each(PD_FEAT_SP_FILE, d, size, offset, fn, ctx, err);
	if (pd_reader_feature(r, PD_FEAT_SP_FILE2, &d, &size, &offset))
		return pd_sp_file_each(PD_FEAT_SP_FILE2, d, size, offset, fn, ctx, err);
	return 0;
}

void pd_sp_file_symbols(const struct pd_sp_file *f, pd_sp_symbol_fn fn, void *ctx)
{
	struct pd_sp_symbol s;
	if (f->proto) {
		struct pb b = { f->syms, f->syms + f->syms_size };
		struct pb_field fl;
		while (pb_next(&b, &fl) > 0)
			if (fl.number == 4 && fl.wire == 2 && pb_symbol(fl.sub, &s) == 0)
				fn(ctx, &s);
		return;
	}
	const uint8_t *p = f->syms;
	for (uint32_t i = 0; i < f->nr_symbols; i++) {
		s.vaddr = ld64(p);
		s.len = ld32(p + 8);
		s.name = (const char *)p + 12;
		s.name_len = strlen(s.name);    /* pd_sp_file_each found its NUL */
		p += 12 + s.name_len + 1;
		fn(ctx, &s);
	}
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
