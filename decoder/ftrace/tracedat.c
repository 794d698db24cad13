/*
 * tracedat.c - see tracedat.h. Stage: a second source beside perf.data,
 * read in one pass after the perf session. The file is mapped; version 6
 * is read front to back (trace-cmd.dat.v6(5)); version 7 through its
 * options sections, whose options give the offsets of the other sections
 * (trace-cmd.dat.v7(5)); compressed sections and per-CPU chunk lists are
 * inflated with zstd. Every read is bounds-checked against the file; an
 * error names the file offset. CPU streams are merged by timestamp, the
 * smallest first, the lower CPU on ties.
 *
 * Workload: millions of events; each is decoded once by libtraceevent.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include "ftpage.h"
#include "tracedat.h"

static const uint8_t MAGIC[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* A bounds-checked reader over one byte range. */
struct cur {
	const uint8_t *p;
	size_t len, pos;
	uint64_t base;                /* file offset of p[0] (for messages; ~0 inside an inflated section) */
	int be, bad;
};

struct cpu_data {
	uint8_t *own;                 /* inflated data (NULL when mapped) */
	const uint8_t *p;
	uint64_t len, file_off;
	uint64_t page;                /* next page to load */
	/* the current page's events */
	struct pev { uint64_t ts; const uint8_t *data; uint32_t len; uint64_t off; } *ev;
	size_t nev, cap, next;
	uint64_t last_ts;
};

struct td {
	const char *path;
	const uint8_t *map;
	size_t size;
	int be, long_size, version;
	uint32_t page_size;
	char compression[32];
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct rb_ftpage_layout layout;
	int have_layout;
	struct cpu_data *cpus;
	int nr_cpus;
	char *msg;
	size_t msglen;
	struct rb_tracedat_stats *st;
	const struct rb_ftrace_sink *sink;
	char *json;                   /* fields of the current event */
	size_t json_len, json_cap;
	struct trace_seq seq;
	int started;                  /* each CPU's first page is loaded */
};

static int failf(struct td *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(struct td *t, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(t->msg, t->msglen, "%s: ", t->path);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < t->msglen)
		vsnprintf(t->msg + n, t->msglen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t get(struct cur *c, int n)
{
	if (c->bad || c->len - c->pos < (size_t)n) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = rb_ft_load(c->p + c->pos, (unsigned)n, c->be);
	c->pos += (size_t)n;
	return v;
}

static const uint8_t *take(struct cur *c, uint64_t n)
{
	if (c->bad || c->len - c->pos < n) {
		c->bad = 1;
		return NULL;
	}
	const uint8_t *p = c->p + c->pos;
	c->pos += (size_t)n;
	return p;
}

static const char *str(struct cur *c)
{
	if (c->bad)
		return NULL;
	const uint8_t *z = memchr(c->p + c->pos, 0, c->len - c->pos);
	if (!z) {
		c->bad = 1;
		return NULL;
	}
	const char *s = (const char *)c->p + c->pos;
	c->pos = (size_t)(z - c->p) + 1;
	return s;
}

static uint64_t where(const struct cur *c)
{
	return c->base == UINT64_MAX ? 0 : c->base + c->pos;
}

/* @s for a message: at most @n - 1 characters, anything not printable ASCII as '?'. */
static const char *printable(const char *s, char *out, size_t n)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < n; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[i] = 0;
	return out;
}

/* A NUL-terminated copy for libtraceevent's text parsers. */
static char *dupz(const uint8_t *p, uint64_t n)
{
	char *s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, p, (size_t)n);
		s[n] = 0;
	}
	return s;
}

/* ------------------------------------------------------------ metadata */

static int parse_header_info(struct td *t, struct cur *c)
{
	const char *tag = str(c);
	if (!tag || strcmp(tag, "header_page"))
		return failf(t, "offset %" PRIu64 ": expected \"header_page\"", where(c));
	uint64_t n = get(c, 8);
	const uint8_t *hp = take(c, n);
	if (!hp)
		return failf(t, "offset %" PRIu64 ": header_page runs past the end", where(c));
	char *s = dupz(hp, n);
	if (!s)
		return -ENOMEM;
	if (rb_ftpage_layout_parse(&t->layout, s, n, t->page_size, t->be) == 0)
		t->have_layout = 1;
	tep_parse_header_page(t->tep, s, (unsigned long)n, t->long_size);
	free(s);
	tag = str(c);
	if (!tag || strcmp(tag, "header_event"))
		return failf(t, "offset %" PRIu64 ": expected \"header_event\"", where(c));
	n = get(c, 8);
	if (!take(c, n))
		return failf(t, "offset %" PRIu64 ": header_event runs past the end", where(c));
	if (!t->have_layout)
		return failf(t, "the header_page format has no commit or data field: the pages cannot be read");
	return 0;
}

static int parse_one_format(struct td *t, struct cur *c, const char *sys)
{
	uint64_t n = get(c, 8);
	const uint8_t *f = take(c, n);
	if (!f)
		return failf(t, "offset %" PRIu64 ": event format of system %s runs past the end", where(c), sys);
	tep_parse_event(t->tep, (const char *)f, (unsigned long)n, sys);   /* a format it cannot parse: events print as unknown */
	return 0;
}

static int parse_ftrace_formats(struct td *t, struct cur *c)
{
	uint32_t n = (uint32_t)get(c, 4);
	for (uint32_t i = 0; i < n && !c->bad; i++)
		if (parse_one_format(t, c, "ftrace") < 0)
			return -1;
	return c->bad ? failf(t, "offset %" PRIu64 ": ftrace formats truncated", where(c)) : 0;
}

static int parse_event_formats(struct td *t, struct cur *c)
{
	uint32_t nsys = (uint32_t)get(c, 4);
	for (uint32_t i = 0; i < nsys && !c->bad; i++) {
		const char *sys = str(c);
		uint32_t n = (uint32_t)get(c, 4);
		if (!sys)
			break;
		for (uint32_t k = 0; k < n && !c->bad; k++)
			if (parse_one_format(t, c, sys) < 0)
				return -1;
	}
	return c->bad ? failf(t, "offset %" PRIu64 ": event formats truncated", where(c)) : 0;
}

/* kallsyms (u32 size), printk formats (u32 size) or saved cmdlines (u64 size). */
static int parse_text(struct td *t, struct cur *c, int which)
{
	uint64_t n = get(c, which == 2 ? 8 : 4);
	const uint8_t *p = take(c, n);
	if (!p)
		return failf(t, "offset %" PRIu64 ": %s runs past the end", where(c),
			     which == 0 ? "kallsyms" : which == 1 ? "printk formats" : "saved cmdlines");
	if (!n)
		return 0;
	char *s = dupz(p, n);
	if (!s)
		return -ENOMEM;
	if (which == 0)
		tep_parse_kallsyms(t->tep, s);
	else if (which == 1)
		tep_parse_printk_formats(t->tep, s);
	else
		tep_parse_saved_cmdlines(t->tep, s);
	free(s);
	return 0;
}

static int alloc_cpus(struct td *t, int n)
{
	if (n <= 0 || n > 65536)
		return failf(t, "%d CPUs: not a plausible count", n);
	t->cpus = calloc((size_t)n, sizeof(*t->cpus));
	if (!t->cpus)
		return -ENOMEM;
	t->nr_cpus = n;
	return 0;
}

static int set_cpu(struct td *t, int cpu, uint64_t off, uint64_t len)
{
	if (cpu < 0 || cpu >= t->nr_cpus)
		return failf(t, "CPU %d out of range (%d CPUs)", cpu, t->nr_cpus);
	if (off > t->size || len > t->size - off) {
		t->st->partial = 1;
		snprintf(t->msg, t->msglen, "%s: CPU %d's data (offset %" PRIu64 ", %" PRIu64 " bytes) runs past the "
			 "end of the file (%zu bytes): read to the end", t->path, cpu, off, len, t->size);
		len = off > t->size ? 0 : t->size - off;
	}
	t->cpus[cpu].p = t->map + off;
	t->cpus[cpu].len = len;
	t->cpus[cpu].file_off = off;
	return 0;
}

static void note_clock(struct td *t, const char *clock)
{
	const char *b = strchr(clock, '['), *e = b ? strchr(b, ']') : NULL;
	char raw[sizeof(t->st->clock)];
	if (b && e)
		snprintf(raw, sizeof(raw), "%.*s", (int)(e - b - 1), b + 1);
	else
		snprintf(raw, sizeof(raw), "%s", clock);
	printable(raw, t->st->clock, sizeof(t->st->clock));
}

static int parse_v6(struct td *t, struct cur *c)
{
	int rc;
	if ((rc = parse_header_info(t, c)) || (rc = parse_ftrace_formats(t, c)) || (rc = parse_event_formats(t, c)) ||
	    (rc = parse_text(t, c, 0)) || (rc = parse_text(t, c, 1)) || (rc = parse_text(t, c, 2)))
		return rc;
	uint32_t ncpu = (uint32_t)get(c, 4);
	const uint8_t *tag = take(c, 10);
	if (!tag)
		return failf(t, "offset %" PRIu64 ": the file ends before its data", where(c));
	if (!memcmp(tag, "options  ", 10)) {
		for (;;) {
			uint16_t id = (uint16_t)get(c, 2);
			if (c->bad || id == 0)
				break;
			uint32_t sz = (uint32_t)get(c, 4);
			const uint8_t *d = take(c, sz);
			if (id == 4 && d && sz) {      /* TRACECLOCK */
				char *s = dupz(d, sz);
				if (s)
					note_clock(t, s);
				free(s);
			}
		}
		tag = take(c, 10);
	}
	if (!tag || c->bad)
		return failf(t, "offset %" PRIu64 ": options run past the end", where(c));
	if (!memcmp(tag, "latency  ", 10))
		return failf(t, "a latency-format trace.dat (text, no ring-buffer pages): nothing to decode");
	if (memcmp(tag, "flyrecord", 10))
		return failf(t, "offset %" PRIu64 ": expected \"flyrecord\"", where(c) - 10);
	if ((rc = alloc_cpus(t, (int)ncpu)))
		return rc;
	for (uint32_t i = 0; i < ncpu; i++) {
		uint64_t off = get(c, 8), len = get(c, 8);
		if (c->bad)
			return failf(t, "offset %" PRIu64 ": CPU table truncated", where(c));
		if ((rc = set_cpu(t, (int)i, off, len)))
			return rc;
	}
	return 0;
}

/* Inflate @n compressed bytes into a new buffer of @un bytes. */
static uint8_t *inflate(struct td *t, const uint8_t *src, uint64_t n, uint64_t un, uint64_t off)
{
	if (strcmp(t->compression, "zstd")) {
		failf(t, "offset %" PRIu64 ": compressed with '%s', which this reader does not support (zstd only)",
		      off, t->compression);
		return NULL;
	}
	if (un > (1ULL << 34)) {
		failf(t, "offset %" PRIu64 ": implausible uncompressed size %" PRIu64, off, un);
		return NULL;
	}
	uint8_t *dst = malloc(un ? (size_t)un : 1);
	if (!dst) {
		failf(t, "out of memory");
		return NULL;
	}
	size_t r = ZSTD_decompress(dst, (size_t)un, src, (size_t)n);
	if (ZSTD_isError(r) || r != un) {
		failf(t, "offset %" PRIu64 ": zstd: %s", off, ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short data");
		free(dst);
		return NULL;
	}
	return dst;
}

/* A v7 section at @off: check its id, hand its (inflated) content to @c. *own is freed by the caller. */
static int open_section(struct td *t, uint64_t off, uint16_t want, struct cur *c, uint8_t **own)
{
	struct cur h = { .p = t->map, .len = t->size, .pos = (size_t)off, .be = t->be };
	*own = NULL;
	if (off >= t->size)
		return failf(t, "section %u at offset %" PRIu64 " is past the end of the file", want, off);
	uint16_t id = (uint16_t)get(&h, 2), flags = (uint16_t)get(&h, 2);
	get(&h, 4);
	uint64_t size = get(&h, 8);
	if (h.bad || id != want)
		return failf(t, "offset %" PRIu64 ": expected section %u, found %u", off, want, id);
	if (flags & 1) {
		uint32_t cn = (uint32_t)get(&h, 4), un = (uint32_t)get(&h, 4);
		const uint8_t *d = take(&h, cn);
		if (!d)
			return failf(t, "offset %" PRIu64 ": compressed section %u runs past the end", off, id);
		if (!(*own = inflate(t, d, cn, un, off)))
			return -1;
		*c = (struct cur){ .p = *own, .len = un, .base = UINT64_MAX, .be = t->be };
		return 0;
	}
	const uint8_t *d = take(&h, size);
	if (!d)
		return failf(t, "offset %" PRIu64 ": section %u runs past the end", off, id);
	*c = (struct cur){ .p = d, .len = (size_t)size, .base = off + 16, .be = t->be };
	return 0;
}

/* One CPU's flyrecord data in a compressed v7 file: u32 chunks, each u32 compressed, u32 plain, bytes. */
static int inflate_cpu(struct td *t, int cpu)
{
	struct cpu_data *cd = &t->cpus[cpu];
	/* trace-cmd 3.1 records a compressed CPU's size 4 bytes short of its chunk list (the count is not
	 * counted): the chunk headers bound the data, the file's end bounds them */
	struct cur c = { .p = cd->p, .len = t->size - (size_t)cd->file_off, .base = cd->file_off, .be = t->be };
	uint32_t n = (uint32_t)get(&c, 4);
	size_t total = 0, cap = 0;
	uint8_t *out = NULL;
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		uint32_t cn = (uint32_t)get(&c, 4), un = (uint32_t)get(&c, 4);
		uint64_t at = where(&c);
		const uint8_t *d = take(&c, cn);
		if (!d)
			break;
		uint8_t *chunk = inflate(t, d, cn, un, at);
		if (!chunk) {
			free(out);
			return -1;
		}
		if (total + un > cap) {
			cap = (total + un) * 2;
			uint8_t *no = realloc(out, cap);
			if (!no) {
				free(chunk);
				free(out);
				return -ENOMEM;
			}
			out = no;
		}
		memcpy(out + total, chunk, un);
		total += un;
		free(chunk);
	}
	if (c.bad) {
		t->st->partial = 1;
		snprintf(t->msg, t->msglen, "%s: CPU %d: compressed data truncated at offset %" PRIu64 ": read what "
			 "was whole", t->path, cpu, where(&c));
	}
	cd->own = out;
	cd->p = out;
	cd->len = total;
	return 0;
}

/* A BUFFER option: the top instance's (name ""), or with @any_name the first one seen. */
static int parse_buffer_option(struct td *t, struct cur *c, int *done, int any_name)
{
	uint64_t off = get(c, 8);
	const char *name = str(c), *clock = str(c);
	uint32_t psize = (uint32_t)get(c, 4), n = (uint32_t)get(c, 4);
	if (c->bad)
		return failf(t, "BUFFER option truncated");
	if (*done || (name && name[0] && !any_name) || n == 0)
		return 0;    /* one instance: the top one, else (trace-cmd record -B only) the first with CPUs */
	*done = 1;
	if (name && name[0])
		snprintf(t->st->instance, sizeof(t->st->instance), "%s", name);
	if (clock)
		note_clock(t, clock);
	if (psize && psize != t->page_size) {
		t->page_size = psize;
		t->layout.page_size = psize;
	}
	uint64_t *v = calloc(n ? n : 1, 3 * sizeof(uint64_t));
	if (!v)
		return -ENOMEM;
	int maxcpu = -1;
	for (uint32_t i = 0; i < n; i++) {
		v[3 * i] = get(c, 4);
		v[3 * i + 1] = get(c, 8);
		v[3 * i + 2] = get(c, 8);
		if ((int)v[3 * i] > maxcpu)
			maxcpu = (int)v[3 * i];
	}
	int rc = c->bad ? failf(t, "BUFFER option's CPU table truncated") : alloc_cpus(t, maxcpu + 1);
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = set_cpu(t, (int)v[3 * i], v[3 * i + 1], v[3 * i + 2]);
	free(v);
	if (rc)
		return rc;
	/* is the flyrecord section compressed? */
	struct cur h = { .p = t->map, .len = t->size, .pos = (size_t)off, .be = t->be };
	get(&h, 2);
	uint16_t flags = (uint16_t)get(&h, 2);
	for (int cpu = 0; !h.bad && (flags & 1) && cpu < t->nr_cpus; cpu++)
		if (t->cpus[cpu].len && (rc = inflate_cpu(t, cpu)))
			return rc;
	return 0;
}

static int parse_v7(struct td *t, struct cur *c)
{
	const char *comp = str(c), *cver = str(c);
	uint64_t off = get(c, 8);
	if (!comp || !cver || c->bad)
		return failf(t, "offset %" PRIu64 ": v7 header truncated", where(c));
	printable(comp, t->compression, sizeof(t->compression));
	uint64_t sect[32] = { 0 };
	int have_buffer = 0, rc = 0, guard = 0;
	uint8_t *named[16] = { NULL };   /* other instances' BUFFER options, in case there is no top one */
	uint32_t named_len[16], nr_named = 0;
	while (off && !rc && guard++ < 1000) {
		struct cur o;
		uint8_t *own;
		if ((rc = open_section(t, off, 0, &o, &own)))
			return rc;
		off = 0;
		for (;;) {
			uint16_t id = (uint16_t)get(&o, 2);
			uint32_t sz = (uint32_t)get(&o, 4);
			const uint8_t *d = take(&o, sz);
			if (o.bad) {
				rc = failf(t, "an options section is truncated");
				break;
			}
			struct cur oc = { .p = d, .len = sz, .base = UINT64_MAX, .be = t->be };
			if (id == 0) {
				off = sz >= 8 ? get(&oc, 8) : 0;
				break;
			}
			if (id >= 16 && id <= 21 && sz >= 8)
				sect[id] = get(&oc, 8);
			else if (id == 3) {
				rc = parse_buffer_option(t, &oc, &have_buffer, 0);
				if (!rc && !have_buffer && nr_named < 16 && (named[nr_named] = malloc(sz ? sz : 1))) {
					memcpy(named[nr_named], d, sz);
					named_len[nr_named++] = sz;
				}
			}
			else if (id == 4 && sz) {
				char *s = dupz(d, sz);
				if (s)
					note_clock(t, s);
				free(s);
			}
			if (rc)
				break;
		}
		free(own);
	}
	for (uint32_t i = 0; i < nr_named; i++) {
		struct cur nc = { .p = named[i], .len = named_len[i], .base = UINT64_MAX, .be = t->be };
		if (!rc && !have_buffer)
			rc = parse_buffer_option(t, &nc, &have_buffer, 1);
		free(named[i]);
	}
	if (rc)
		return rc;
	if (!sect[16])
		return failf(t, "no HEADER_INFO section: the pages cannot be read");
	static const struct { uint16_t id; int which; } order[] = {
		{ 16, -1 }, { 17, -2 }, { 18, -3 }, { 19, 0 }, { 20, 1 }, { 21, 2 },
	};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && !rc; i++) {
		if (!sect[order[i].id])
			continue;
		struct cur s;
		uint8_t *own;
		if ((rc = open_section(t, sect[order[i].id], order[i].id, &s, &own)))
			break;
		rc = order[i].which == -1 ? parse_header_info(t, &s) : order[i].which == -2 ? parse_ftrace_formats(t, &s) :
		     order[i].which == -3 ? parse_event_formats(t, &s) : parse_text(t, &s, order[i].which);
		free(own);
	}
	if (!rc && !have_buffer)
		rc = failf(t, "no flyrecord buffer (BUFFER option) in the file");
	return rc;
}

/* ------------------------------------------------------------ events */

static void json_put(struct td *t, const char *s, size_t n)
{
	if (t->json_len + n + 1 > t->json_cap) {
		size_t cap = t->json_cap ? t->json_cap * 2 : 1024;
		while (cap < t->json_len + n + 1)
			cap *= 2;
		char *nj = realloc(t->json, cap);
		if (!nj)
			return;
		t->json = nj;
		t->json_cap = cap;
	}
	memcpy(t->json + t->json_len, s, n);
	t->json_len += n;
	t->json[t->json_len] = 0;
}

static void json_str(struct td *t, const char *s, size_t max)
{
	json_put(t, "\"", 1);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		char esc[8];
		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			json_put(t, esc, 2);
		} else if (ch < 0x20 || ch >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			json_put(t, esc, 6);
		} else {
			json_put(t, (const char *)&ch, 1);
		}
	}
	json_put(t, "\"", 1);
}

static void json_num(struct td *t, uint64_t v, int size, int is_signed)
{
	char b[32];
	if (is_signed) {
		int64_t x = size == 1 ? (int8_t)v : size == 2 ? (int16_t)v : size == 4 ? (int32_t)v : (int64_t)v;
		snprintf(b, sizeof(b), "%" PRId64, x);
	} else {
		snprintf(b, sizeof(b), "%" PRIu64, v);
	}
	json_put(t, b, strlen(b));
}

static void field_json(struct td *t, struct tep_format_field *f, const uint8_t *data, int size)
{
	json_str(t, f->name, 256);
	json_put(t, ":", 1);
	int off = f->offset, len = f->size;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (off < 0 || off + 4 > size) {
			json_put(t, "null", 4);
			return;
		}
		uint32_t loc = (uint32_t)tep_read_number(t->tep, data + off, 4);
		off = (int)(loc & 0xffff);
		len = (int)(loc >> 16);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += f->offset + f->size;
	}
	if (off < 0 || len < 0 || off + len > size) {
		json_put(t, "null", 4);
		return;
	}
	if (f->flags & TEP_FIELD_IS_STRING) {
		json_str(t, (const char *)data + off, (size_t)len);
		return;
	}
	if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
		int es = (int)f->elementsize;
		if (es != 1 && es != 2 && es != 4 && es != 8)
			es = 1;
		json_put(t, "[", 1);
		for (int i = 0; i + es <= len; i += es) {
			if (i)
				json_put(t, ",", 1);
			json_num(t, tep_read_number(t->tep, data + off + i, es), es, !!(f->flags & TEP_FIELD_IS_SIGNED));
		}
		json_put(t, "]", 1);
		return;
	}
	if (len != 1 && len != 2 && len != 4 && len != 8) {
		json_put(t, "null", 4);
		return;
	}
	json_num(t, tep_read_number(t->tep, data + off, len), len, !!(f->flags & TEP_FIELD_IS_SIGNED));
}

static int emit_event(struct td *t, int cpu, const struct pev *pe)
{
	struct tep_record rec = { .ts = pe->ts, .offset = pe->off, .size = (int)pe->len, .record_size = (int)pe->len,
				  .data = (void *)pe->data, .cpu = cpu, .ref_count = 1, .locked = 1 };
	struct rb_ftrace_ev ev = { .time = pe->ts, .cpu = cpu, .pid = -1, .comm = "<...>", .system = "unknown",
				   .name = "unknown", .fields = "{}", .info = "", .file_offset = pe->off };
	struct tep_event *e = pe->len >= 8 ? tep_find_event(t->tep, tep_data_type(t->tep, &rec)) : NULL;
	t->st->events++;
	t->json_len = 0;
	if (e) {
		ev.pid = tep_data_pid(t->tep, &rec);
		ev.comm = tep_data_comm_from_pid(t->tep, ev.pid);
		ev.flags = tep_data_flags(t->tep, &rec);
		ev.preempt_count = tep_data_preempt_count(t->tep, &rec);
		ev.system = e->system ? e->system : "";
		ev.name = e->name ? e->name : "";
		json_put(t, "{", 1);
		int first = 1;
		for (struct tep_format_field *f = e->format.fields; f; f = f->next) {
			if (!first)
				json_put(t, ",", 1);
			first = 0;
			field_json(t, f, pe->data, (int)pe->len);
		}
		json_put(t, "}", 1);
		if (t->json)
			ev.fields = t->json;
		trace_seq_reset(&t->seq);
		tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&t->seq);
		ev.info = t->seq.buffer ? t->seq.buffer : "";
	} else {
		t->st->unknown_events++;
	}
	return t->sink->event ? t->sink->event(t->sink->ctx, &ev) : 0;
}

static int collect(void *ctx, uint64_t ts, const uint8_t *data, uint32_t len, uint32_t offset)
{
	struct cpu_data *cd = ctx;
	if (cd->nev == cd->cap) {
		size_t cap = cd->cap ? cd->cap * 2 : 256;
		struct pev *v = realloc(cd->ev, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		cd->ev = v;
		cd->cap = cap;
	}
	cd->ev[cd->nev++] = (struct pev){ ts, data, len, offset };
	return 0;
}

/* Load the CPU's next page that has events. 1 loaded, 0 no more, <0 error or sink's value. */
static int load_page(struct td *t, int cpu)
{
	struct cpu_data *cd = &t->cpus[cpu];
	uint64_t ps = t->layout.page_size;
	while ((cd->page + 1) * ps <= cd->len) {
		const uint8_t *pg = cd->p + cd->page * ps;
		uint64_t pofs = cd->page * ps;
		struct rb_ftpage_info info;
		cd->nev = cd->next = 0;
		cd->page++;
		int rc = rb_ftpage_parse(&t->layout, pg, (size_t)ps, &info, collect, cd);
		if (rc)
			return rc;
		for (size_t i = 0; i < cd->nev; i++)
			cd->ev[i].off += pofs + (cd->own ? 0 : cd->file_off);
		t->st->pages++;
		char detail[160];
		struct rb_gap_ev g = { .time_start = cd->last_ts ? cd->last_ts : info.timestamp, .time_end = info.timestamp,
				       .cpu = cpu, .pid = -1, .tid = -1, .source = "ftrace",
				       .file_offset = (cd->own ? 0 : cd->file_off) + pofs, .detail = detail };
		if (info.missed) {
			t->st->missed_pages++;
			g.reason = "ftrace missed events";
			if (info.missed_count >= 0) {
				g.records_lost = (uint64_t)info.missed_count;
				t->st->missed_events += (uint64_t)info.missed_count;
				snprintf(detail, sizeof(detail), "CPU %d page %" PRIu64 ": the kernel overwrote or dropped "
					 "%" PRId64 " events before it", cpu, cd->page - 1, info.missed_count);
			} else {
				snprintf(detail, sizeof(detail), "CPU %d page %" PRIu64 ": events lost before it, count "
					 "not stored by the kernel", cpu, cd->page - 1);
			}
			if (t->sink->gap && (rc = t->sink->gap(t->sink->ctx, &g)))
				return rc;
		}
		if (info.damaged) {
			t->st->damaged_pages++;
			t->st->partial = 1;
			g.reason = "ftrace damaged page";
			g.time_start = g.time_end = cd->nev ? cd->ev[cd->nev - 1].ts : info.timestamp;
			g.records_lost = 0;
			if (info.commit_overflow)
				snprintf(detail, sizeof(detail), "CPU %d page %" PRIu64 ": its commit size runs past the "
					 "page; events read to the page's end", cpu, cd->page - 1);
			else
				snprintf(detail, sizeof(detail), "CPU %d page %" PRIu64 ": malformed event at page offset "
					 "%u; the rest of the page is skipped", cpu, cd->page - 1, info.damaged_at);
			snprintf(t->msg, t->msglen, "%s: %s", t->path, detail);
			if (t->sink->gap && (rc = t->sink->gap(t->sink->ctx, &g)))
				return rc;
		}
		if (cd->nev)
			return 1;
	}
	if (cd->len % ps && !t->st->partial) {
		t->st->partial = 1;
		snprintf(t->msg, t->msglen, "%s: CPU %d's data ends in a partial page (%" PRIu64 " bytes): ignored",
			 t->path, cpu, cd->len % ps);
	}
	return 0;
}

/* The events of every CPU up to @time, merged in time order. */
static int merge(struct td *t, uint64_t time)
{
	int rc;
	for (int c = 0; !t->started && c < t->nr_cpus; c++)
		if ((rc = load_page(t, c)) < 0)
			return rc;
	t->started = 1;
	for (;;) {
		int best = -1;
		uint64_t bt = 0;
		for (int c = 0; c < t->nr_cpus; c++) {
			struct cpu_data *cd = &t->cpus[c];
			if (cd->next < cd->nev && (best < 0 || cd->ev[cd->next].ts < bt)) {
				best = c;
				bt = cd->ev[cd->next].ts;
			}
		}
		if (best < 0 || bt > time)
			return 0;
		struct cpu_data *cd = &t->cpus[best];
		if ((rc = emit_event(t, best, &cd->ev[cd->next])))
			return rc;
		cd->last_ts = cd->ev[cd->next].ts;
		if (++cd->next == cd->nev && (rc = load_page(t, best)) < 0)
			return rc;
	}
}

int rb_tracedat_is(const char *path)
{
	uint8_t b[10];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, b, sizeof(b));
	close(fd);
	return n == (ssize_t)sizeof(b) && !memcmp(b, MAGIC, sizeof(b));
}

static void td_free(struct td *t);

/* libtraceevent for the file's byte order, long and page size (t->be, long_size, page_size). */
static int tep_setup(struct td *t)
{
	if (!(t->tep = tep_alloc()))
		return -1;
	tep_set_loglevel(TEP_LOG_NONE);
	tep_set_file_bigendian(t->tep, t->be ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	tep_set_local_bigendian(t->tep, TEP_BIG_ENDIAN);
#else
	tep_set_local_bigendian(t->tep, TEP_LITTLE_ENDIAN);
#endif
	tep_set_long_size(t->tep, t->long_size);
	tep_set_page_size(t->tep, (int)t->page_size);
	trace_seq_init(&t->seq);
	return 0;
}

int rb_tracedat_open(struct rb_tracedat **out, const char *path, const struct rb_ftrace_sink *sink,
		     struct rb_tracedat_stats *st, char *msg, size_t msglen)
{
	*out = NULL;
	struct td *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct td){ .path = path, .msg = msg, .msglen = msglen, .st = st, .sink = sink };
	memset(st, 0, sizeof(*st));
	msg[0] = 0;
	int rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		failf(t, "cannot open: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		free(t);
		return -1;
	}
	t->size = (size_t)sb.st_size;
	t->map = t->size ? mmap(NULL, t->size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (t->map == MAP_FAILED || !t->map) {
		t->map = NULL;
		rc = failf(t, "cannot map %zu bytes: %s", t->size, t->size ? strerror(errno) : "empty file");
		free(t);
		return rc;
	}
	struct cur c = { .p = t->map, .len = t->size };
	rc = -1;
	const uint8_t *m = take(&c, 10);
	const char *ver = m && !memcmp(m, MAGIC, 10) ? str(&c) : NULL;
	if (!ver) {
		failf(t, "not a trace.dat (no \\027\\010Dtracing magic at offset 0)");
		goto out;
	}
	t->version = atoi(ver);
	st->version = t->version;
	t->be = (int)get(&c, 1);
	c.be = t->be;
	t->long_size = (int)get(&c, 1);
	t->page_size = (uint32_t)get(&c, 4);
	if (c.bad || (t->version != 6 && t->version != 7) || t->page_size < 64 || t->page_size > (1u << 24)) {
		char vb[16];
		failf(t, "version '%s', page size %u: only versions 6 and 7 with a sane page size are read",
		      printable(ver, vb, sizeof(vb)), t->page_size);
		goto out;
	}
	if (tep_setup(t) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	t->plugins = tep_load_plugins(t->tep);    /* the print handlers trace-cmd report uses */
	rc = t->version == 6 ? parse_v6(t, &c) : parse_v7(t, &c);
	if (rc)
		goto out;
	/* the kernel's long (commit size) decides field sizes of "long" in formats, as trace-cmd does */
	tep_set_long_size(t->tep, (int)t->layout.commit_size);
	st->nr_cpus = t->nr_cpus;
	*out = (struct rb_tracedat *)t;
	return 0;
out:
	td_free(t);
	free(t);
	return rc;
}

int rb_tracedat_run_until(struct rb_tracedat *t, uint64_t time) { return merge((struct td *)t, time); }

/* ------------------------------------------- perf.data's tracing data */

struct rb_tracepoints {
	struct td t;
	struct rb_tracedat_stats st;
};

int rb_tracepoints_open(struct rb_tracepoints **out, const uint8_t *data, size_t size, char *msg, size_t msglen)
{
	*out = NULL;
	struct rb_tracepoints *tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	struct td *t = &tp->t;
	*t = (struct td){ .path = "tracing data", .msg = msg, .msglen = msglen, .st = &tp->st };
	msg[0] = 0;
	struct cur c = { .p = data, .len = size, .base = UINT64_MAX };
	const uint8_t *m = take(&c, 10);
	const char *ver = m && !memcmp(m, MAGIC, 10) ? str(&c) : NULL;
	int rc = -1;
	if (!ver) {
		failf(t, "no \\027\\010Dtracing magic");
		goto out;
	}
	t->be = (int)get(&c, 1);
	c.be = t->be;
	t->long_size = (int)get(&c, 1);
	t->page_size = (uint32_t)get(&c, 4);
	if (c.bad || !t->page_size) {
		failf(t, "its header is cut short");
		goto out;
	}
	if (tep_setup(t) < 0) {     /* no plugins: perf 6.1 prints every event by its format's print fmt */
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = parse_header_info(t, &c)) || (rc = parse_ftrace_formats(t, &c)) || (rc = parse_event_formats(t, &c)) ||
	    (rc = parse_text(t, &c, 0)) || (rc = parse_text(t, &c, 1)) ||
	    (strtod(ver, NULL) >= 0.6 && (rc = parse_text(t, &c, 2))))
		goto out;
	tep_set_long_size(t->tep, (int)t->layout.commit_size);
	*out = tp;
	return 0;
out:
	td_free(t);
	free(tp);
	return rc;
}

void rb_tracepoints_resolver(struct rb_tracepoints *tp, char *(*fn)(void *priv, unsigned long long *addr, char **mod),
			     void *priv)
{
	tep_set_function_resolver(tp->t.tep, fn, priv);
}

const char *rb_tracepoints_text(struct rb_tracepoints *tp, uint64_t id, int cpu, const void *raw, uint32_t size)
{
	struct td *t = &tp->t;
	struct tep_event *e = id <= INT32_MAX ? tep_find_event(t->tep, (int)id) : NULL;
	if (!e)
		return NULL;
	struct tep_record rec = { .cpu = cpu, .size = (int)size, .data = (void *)raw };
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	return t->seq.state == TRACE_SEQ__MEM_ALLOC_FAILED ? NULL : t->seq.buffer;
}

void rb_tracepoints_free(struct rb_tracepoints *tp)
{
	if (!tp)
		return;
	td_free(&tp->t);
	free(tp);
}

static void td_free(struct td *t)
{
	for (int i = 0; t->cpus && i < t->nr_cpus; i++) {
		free(t->cpus[i].own);
		free(t->cpus[i].ev);
	}
	free(t->cpus);
	free(t->json);
	if (t->tep) {
		trace_seq_destroy(&t->seq);
		if (t->plugins)
			tep_unload_plugins(t->plugins, t->tep);
		tep_free(t->tep);
	}
	if (t->map)
		munmap((void *)t->map, t->size);
}

void rb_tracedat_close(struct rb_tracedat *t)
{
	if (!t)
		return;
	td_free((struct td *)t);
	free(t);
}

int rb_tracedat_run(const char *path, const struct rb_ftrace_sink *sink, struct rb_tracedat_stats *st,
		    char *msg, size_t msglen)
{
	struct rb_tracedat *t;
	int rc = rb_tracedat_open(&t, path, sink, st, msg, msglen);
	if (rc)
		return rc;
	rc = rb_tracedat_run_until(t, UINT64_MAX);
	rb_tracedat_close(t);
	return rc;
}
