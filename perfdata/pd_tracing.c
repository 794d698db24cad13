/*
 * pd_tracing.c - the tracing data of a recording with tracepoints (the
 * TRACING_DATA feature, the payload of perf's pipe-mode TRACING_DATA record,
 * simpleperf's tracing-data record), walked for the id, system and name of
 * each event format: what perf names a tracepoint event by when nothing
 * else names it ("sched:sched_switch", "probe_x:main"). Layout as perf's
 * trace-event-read.c (trace_report) reads it: "\027\010\104tracing", a
 * version string ("0.5", "0.6"), an endianness byte (1 = big) that orders
 * every count after it, a long-size byte, u32 page size; "header_page\0" u64
 * size and text, "header_event\0" u64 size and text; u32 count of ftrace
 * formats, each u64 size and text; u32 count of systems, each a system name
 * (NUL-terminated), u32 count of formats, each u64 size and text; u32 size
 * and kallsyms text; u32 size and printk formats; from version 0.6 a u64
 * size and the saved cmdlines. A format's text has the lines "name: X" and
 * "ID: N". Nothing here needs libtraceevent: the fields themselves are read
 * by decoder/ftrace/tracedat.c.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "pd_internal.h"

struct tcur {
	const uint8_t *d;
	size_t size, pos;
	uint64_t base;      /* the file offset of d[0], for the messages */
	int be;
	pd_tracing_warn_fn warn;
	void *ctx;
	int failed;
};

static void vwarn(struct tcur *c, uint64_t off, const char *fmt, va_list ap)
{
	char msg[256];
	if (!c->warn)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	c->warn(c->ctx, off, msg);
}

/* A damaged entry: said, and the walk goes on with the next. */
static void twarn(struct tcur *c, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void twarn(struct tcur *c, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(c, off, fmt, ap);
	va_end(ap);
}

/* A damaged count or size: nothing after it can be found; said once, and the walk stops. */
static void tfail(struct tcur *c, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tfail(struct tcur *c, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	if (c->failed++)
		return;
	va_start(ap, fmt);
	vwarn(c, off, fmt, ap);
	va_end(ap);
}

/* A u32 or u64 count in the data's byte order; 0 and a warning when it does not fit. */
static uint64_t tnum(struct tcur *c, unsigned n, const char *what)
{
	if (c->failed)
		return 0;
	if (c->size - c->pos < n) {
		tfail(c, c->base + c->pos, "tracing data: %s at offset %" PRIu64 " is cut off by its end (%zu bytes)",
		      what, c->base + c->pos, c->size);
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->d[c->pos + (c->be ? n - 1 - i : i)] << (8 * i);
	c->pos += n;
	return v;
}

/* @n bytes (the text @what): their start, or NULL and a warning. */
static const uint8_t *ttake(struct tcur *c, uint64_t n, const char *what, size_t at)
{
	if (c->failed)
		return NULL;
	if (n > c->size - c->pos) {
		tfail(c, c->base + at, "tracing data: %s of %" PRIu64 " bytes (size at offset %" PRIu64
		      ") runs past its end (%zu bytes)", what, n, c->base + at, c->size);
		return NULL;
	}
	const uint8_t *p = c->d + c->pos;
	c->pos += (size_t)n;
	return p;
}

/* A NUL-terminated string (a tag, the version, a system's name), or NULL and a warning. */
static const char *tstr(struct tcur *c, const char *what)
{
	if (c->failed)
		return NULL;
	const uint8_t *z = memchr(c->d + c->pos, 0, c->size - c->pos);
	if (!z) {
		tfail(c, c->base + c->pos, "tracing data: %s at offset %" PRIu64 " has no terminating NUL", what,
		      c->base + c->pos);
		return NULL;
	}
	const char *s = (const char *)c->d + c->pos;
	c->pos = (size_t)(z - c->d) + 1;
	return s;
}

/* A sized text block: u64 (or u32) size, then the text. */
static const uint8_t *tblock(struct tcur *c, unsigned width, const char *what, uint64_t *n)
{
	size_t at = c->pos;
	*n = tnum(c, width, what);
	return ttake(c, *n, what, at);
}

/* "tag\0" then a u64-sized text (header_page, header_event). */
static void theader(struct tcur *c, const char *tag)
{
	size_t at = c->pos;
	const char *s = tstr(c, tag);
	uint64_t n;
	if (s && strcmp(s, tag)) {
		tfail(c, c->base + at, "tracing data: offset %" PRIu64 " holds no \"%s\"", c->base + at, tag);
		return;
	}
	tblock(c, 8, tag, &n);
}

/* The value of the line "@key: VALUE" in a format's text: its start and length, or NULL. */
static const char *format_line(const char *t, size_t n, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < n;) {
		const char *eol = memchr(t + i, '\n', n - i);
		size_t ll = eol ? (size_t)(eol - (t + i)) : n - i;
		if (ll > kl && !memcmp(t + i, key, kl) && t[i + kl] == ':') {
			const char *v = t + i + kl + 1;
			const char *e = t + i + ll;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			*len = (size_t)(e - v);
			return v;
		}
		i += ll + 1;
	}
	return NULL;
}

/* One event format of @sys: its name and ID to @fn. 1 when passed on. */
static int tformat(struct tcur *c, const char *sys, pd_tracing_fn fn)
{
	size_t at = c->pos;
	uint64_t n;
	const char *t = (const char *)tblock(c, 8, "event format", &n);
	if (!t)
		return 0;
	size_t nl, il;
	const char *name = format_line(t, (size_t)n, "name", &nl);
	const char *id = format_line(t, (size_t)n, "ID", &il);
	char idbuf[24], namebuf[256];
	if (!name || !id || !nl || !il || il >= sizeof(idbuf) || nl >= sizeof(namebuf)) {
		twarn(c, c->base + at, "tracing data: the event format at offset %" PRIu64
		      " (system %.64s) has no usable \"name:\" or \"ID:\" line", c->base + at, sys);
		return 0;
	}
	memcpy(idbuf, id, il);
	idbuf[il] = 0;
	char *end;
	unsigned long long v = strtoull(idbuf, &end, 10);
	if (*end || idbuf[0] == '-') {
		twarn(c, c->base + at, "tracing data: the event format at offset %" PRIu64 " has the ID \"%s\", not a number",
		      c->base + at, idbuf);
		return 0;
	}
	memcpy(namebuf, name, nl);
	namebuf[nl] = 0;
	if (fn)
		fn(c->ctx, v, sys, namebuf);
	return 1;
}

long pd_tracing_each(const uint8_t *d, size_t size, uint64_t base, pd_tracing_fn fn, pd_tracing_warn_fn warn,
		     void *ctx)
{
	static const uint8_t magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct tcur c = { .d = d, .size = size, .base = base, .warn = warn, .ctx = ctx };
	long passed = 0;
	if (size < sizeof(magic) || memcmp(d, magic, sizeof(magic))) {
		tfail(&c, base, "tracing data: no \"\\027\\010\\104tracing\" magic at offset %" PRIu64, base);
		return -1;
	}
	c.pos = sizeof(magic);
	size_t vat = c.pos;
	const char *version = tstr(&c, "version");
	if (!version)
		return -1;
	double ver = strtod(version, NULL);
	if (ver < 0.5 || ver > 0.6)   /* perf reads on: the layout is 0.6's unless older */
		twarn(&c, base + vat, "tracing data: version \"%.16s\" at offset %" PRIu64 " is neither 0.5 nor 0.6",
		      version, base + vat);
	if (c.size - c.pos < 6) {
		tfail(&c, base + c.pos, "tracing data: the header at offset %" PRIu64 " is cut off", base + c.pos);
		return -1;
	}
	if (d[c.pos] > 1)
		twarn(&c, base + c.pos, "tracing data: endianness byte %u at offset %" PRIu64 " is neither 0 nor 1; read as big",
		      d[c.pos], base + c.pos);
	c.be = !!d[c.pos++];
	if (d[c.pos] != 4 && d[c.pos] != 8)
		twarn(&c, base + c.pos, "tracing data: long size %u at offset %" PRIu64 " is neither 4 nor 8", d[c.pos],
		      base + c.pos);
	c.pos++;
	size_t pat = c.pos;
	if (!tnum(&c, 4, "page size") && !c.failed)
		tfail(&c, base + pat, "tracing data: page size 0 at offset %" PRIu64, base + pat);
	if (c.failed)
		return -1;
	theader(&c, "header_page");
	theader(&c, "header_event");
	uint64_t nr = tnum(&c, 4, "ftrace format count");
	for (uint64_t i = 0; i < nr && !c.failed; i++) {
		uint64_t n;
		tblock(&c, 8, "ftrace format", &n);
	}
	uint64_t nsys = tnum(&c, 4, "system count");
	for (uint64_t s = 0; s < nsys && !c.failed; s++) {
		const char *sys = tstr(&c, "system name");
		uint64_t nf = tnum(&c, 4, "event format count");
		if (!sys)
			break;
		for (uint64_t i = 0; i < nf && !c.failed; i++)
			passed += tformat(&c, sys, fn);
	}
	uint64_t n;
	tblock(&c, 4, "kallsyms", &n);
	tblock(&c, 4, "printk formats", &n);
	if (ver >= 0.6)
		tblock(&c, 8, "saved cmdlines", &n);
	return passed;
}
