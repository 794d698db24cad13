/*
 * recbuf.h - perf records built field by field in the host's byte order, as
 * the kernel or perf would write them, for the unit tests that feed the
 * format library and the ring consumer: begin() a header, put the fields,
 * end() sets header.size. Strings are NUL-padded to 8 bytes like perf's.
 */
#ifndef RECBUF_H
#define RECBUF_H
#include <stdint.h>
#include <string.h>

struct recbuf { uint8_t b[4096]; size_t n; };   /* n: bytes so far, header included */

static inline void put(struct recbuf *r, const void *p, size_t n) { memcpy(r->b + r->n, p, n); r->n += n; }
static inline void p64(struct recbuf *r, uint64_t v) { put(r, &v, 8); }
static inline void p32(struct recbuf *r, uint32_t v) { put(r, &v, 4); }
static inline void p16(struct recbuf *r, uint16_t v) { put(r, &v, 2); }
static inline void pstr(struct recbuf *r, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;
	put(r, s, n);
	while (pad--)
		put(r, "", 1);
}
static inline void begin(struct recbuf *r, uint32_t type, uint16_t misc)
{
	r->n = 0;
	p32(r, type);
	p16(r, misc);
	p16(r, 0);
}
static inline void end(struct recbuf *r) { uint16_t n = (uint16_t)r->n; memcpy(r->b + 6, &n, 2); }
#endif
