/*
 * test_ftpage.c - the ftrace page parser on hand-built pages: every event
 * header encoding (type_len 1..28, type_len 0 with a length word, padding
 * with and without a delta, time extend, absolute timestamp with and without
 * the top bits), the missed-events flags (count stored, count not stored),
 * both byte orders, a 4-byte commit (32-bit kernels), and damaged pages that
 * must stop the walk without reading outside the page.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "decoder/ftrace/ftpage.h"
#include "tap.h"

#define PAGE 4096

/* The kernel's header_page description, 64-bit and 32-bit kernels. */
static const char HP64[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char HP32[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";

struct pb { uint8_t page[PAGE]; uint32_t pos; int be; uint32_t doff, csize; };

static void put(uint8_t *p, uint64_t v, int n, int be)
{
	for (int i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void w32(struct pb *b, uint32_t v)
{
	put(b->page + b->doff + b->pos, v, 4, b->be);
	b->pos += 4;
}

static void hdr(struct pb *b, uint32_t type_len, uint32_t delta)
{
	w32(b, b->be ? (type_len << 27) | delta : type_len | (delta << 5));
}

/* A data event of @n payload bytes filled with @fill; type_len 0 when @n > 112, as the kernel does. */
static void event(struct pb *b, uint32_t delta, uint32_t n, uint8_t fill)
{
	uint32_t words = (n + 3) / 4;
	if (words <= 28) {
		hdr(b, words, delta);
	} else {
		hdr(b, 0, delta);
		w32(b, n + 4);
	}
	memset(b->page + b->doff + b->pos, fill, n);
	b->pos += words * 4;
}

static void finish(struct pb *b, uint64_t ts, uint64_t flags)
{
	put(b->page, ts, 8, b->be);
	put(b->page + 8, b->pos | flags, (int)b->csize, b->be);
}

struct got { int n; uint64_t ts[32]; uint32_t len[32]; uint8_t first[32]; };

static int on_event(void *ctx, uint64_t ts, const uint8_t *data, uint32_t len, uint32_t offset)
{
	struct got *g = ctx;
	(void)offset;
	if (g->n < 32) {
		g->ts[g->n] = ts;
		g->len[g->n] = len;
		g->first[g->n] = len ? data[0] : 0;
	}
	g->n++;
	return 0;
}

static void init(struct pb *b, struct rb_ftpage_layout *l, const char *hp, int be)
{
	memset(b, 0, sizeof(*b));
	b->be = be;
	if (rb_ftpage_layout_parse(l, hp, strlen(hp), PAGE, be) < 0)
		abort();
	b->doff = l->data_offset;
	b->csize = l->commit_size;
}

/* Every encoding on one page; the same page must read the same in either byte order and commit size. */
static void all_encodings(const char *hp, int be, const char *what)
{
	struct pb b;
	struct rb_ftpage_layout l;
	struct rb_ftpage_info info;
	struct got g = { 0 };
	const uint64_t T0 = 1000000;
	init(&b, &l, hp, be);
	event(&b, 10, 8, 0xa1);                 /* type_len 2 */
	event(&b, 5, 120, 0xa2);                /* type_len 0, length word */
	hdr(&b, RB_FT_TIME_EXTEND, 7);          /* + (3 << 27) + 7 */
	w32(&b, 3);
	event(&b, 1, 4, 0xa3);                  /* type_len 1 */
	hdr(&b, RB_FT_PADDING, 4);              /* a discarded event: 16 bytes, its delta counts */
	w32(&b, 12);
	b.pos += 8;
	event(&b, 2, 112, 0xa4);                /* type_len 28, the largest inline length */
	hdr(&b, RB_FT_TIME_STAMP, 0x1234);      /* absolute: (5 << 27) | 0x1234 */
	w32(&b, 5);
	event(&b, 3, 12, 0xa5);
	hdr(&b, RB_FT_PADDING, 0);              /* end of the page's events */
	w32(&b, 0);
	uint32_t end = b.pos;
	event(&b, 1, 4, 0xee);                  /* after the null padding: must not be seen */
	b.pos = end + 8;
	finish(&b, T0, 0);
	int rc = rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	uint64_t t1 = T0 + 10, t2 = t1 + 5, t3 = t2 + (3ULL << 27) + 7 + 1, t4 = t3 + 4 + 2;
	uint64_t t5 = ((5ULL << 27) | 0x1234) + 3;
	ok(rc == 0 && g.n == 5 && info.events == 5 && !info.damaged && !info.missed,
	   "%s: 5 data events among padding, extend, timestamp (got %d, damaged %d)", what, g.n, info.damaged);
	ok(g.ts[0] == t1 && g.len[0] == 8 && g.first[0] == 0xa1, "%s: type_len 2: time %llu, 8 bytes", what,
	   (unsigned long long)g.ts[0]);
	ok(g.ts[1] == t2 && g.len[1] == 120 && g.first[1] == 0xa2, "%s: type_len 0: 120 bytes from its length word",
	   what);
	ok(g.ts[2] == t3 && g.len[2] == 4 && g.first[2] == 0xa3, "%s: time extend adds (array[0] << 27) + delta",
	   what);
	ok(g.ts[3] == t4 && g.len[3] == 112 && g.first[3] == 0xa4, "%s: padding with a delta is skipped, its delta kept",
	   what);
	ok(g.ts[4] == t5 && g.len[4] == 12 && g.first[4] == 0xa5, "%s: absolute timestamp sets the time", what);
	ok(info.timestamp == T0 && info.size == end + 8, "%s: page header: timestamp and commit size", what);
}

static void missed(void)
{
	struct pb b;
	struct rb_ftpage_layout l;
	struct rb_ftpage_info info;
	struct got g = { 0 };
	init(&b, &l, HP64, 0);
	event(&b, 1, 8, 1);
	put(b.page + b.doff + b.pos, 4242, 8, 0);   /* the count, after the events */
	finish(&b, 50, RB_FTPAGE_MISSED_EVENTS | RB_FTPAGE_MISSED_STORED);
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(info.missed && info.missed_count == 4242 && g.n == 1 && info.size == 12,
	   "missed events, count stored: 4242 (got %lld), the flags are not part of the size",
	   (long long)info.missed_count);

	init(&b, &l, HP64, 0);
	event(&b, 1, 8, 1);
	finish(&b, 50, RB_FTPAGE_MISSED_EVENTS);
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(info.missed && info.missed_count == -1, "missed events, no room for the count: -1");

	init(&b, &l, HP32, 1);
	event(&b, 1, 8, 1);
	put(b.page + b.doff + b.pos, 7, 4, 1);
	finish(&b, 50, RB_FTPAGE_MISSED_EVENTS | RB_FTPAGE_MISSED_STORED);
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(info.missed && info.missed_count == 7, "32-bit big-endian kernel: count stored as a 4-byte long");

	init(&b, &l, HP64, 0);
	event(&b, 1, 8, 1);
	finish(&b, 50, 0);
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(!info.missed && info.missed_count == 0, "no flag: nothing missed");
}

static void abs_top_bits(void)
{
	struct pb b;
	struct rb_ftpage_layout l;
	struct rb_ftpage_info info;
	struct got g = { 0 };
	const uint64_t base = (0x08ULL << 56) | 100;   /* a running time with a top bit set */
	init(&b, &l, HP64, 0);
	hdr(&b, RB_FT_TIME_STAMP, 200);
	w32(&b, 0);
	event(&b, 0, 4, 1);
	finish(&b, base, 0);
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(g.n == 1 && g.ts[0] == ((0x08ULL << 56) | 200),
	   "absolute timestamp: the top 5 bits come from the running time");
	init(&b, &l, HP64, 0);
	hdr(&b, RB_FT_TIME_STAMP, 50);            /* smaller than the running low bits: they wrapped */
	w32(&b, 0);
	event(&b, 0, 4, 1);
	finish(&b, base, 0);
	memset(&g, 0, sizeof(g));
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(g.n == 1 && g.ts[0] == ((0x08ULL << 56) | 50) + (1ULL << 59),
	   "absolute timestamp below the running time: one 2^59 step forward");
}

static void damaged(void)
{
	struct pb b;
	struct rb_ftpage_layout l;
	struct rb_ftpage_info info;
	struct got g = { 0 };
	init(&b, &l, HP64, 0);
	event(&b, 1, 8, 1);
	finish(&b, 50, 0);
	put(b.page + 8, 100000, 8, 0);          /* commit beyond the page */
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(info.damaged && info.commit_overflow && info.size == PAGE - 16 && g.n == 1,
	   "commit past the page: cut to it, marked damaged");

	init(&b, &l, HP64, 0);
	event(&b, 1, 8, 1);
	hdr(&b, 0, 1);
	w32(&b, 4000);                          /* a length beyond the commit */
	finish(&b, 50, 0);
	memset(&g, 0, sizeof(g));
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(info.damaged && info.damaged_at == 16 + 12 && g.n == 1,
	   "event longer than the page's data: walk stops there (offset %u)", info.damaged_at);

	init(&b, &l, HP64, 0);
	hdr(&b, RB_FT_TIME_EXTEND, 1);          /* truncated: its second word is past the commit */
	finish(&b, 50, 0);
	memset(&g, 0, sizeof(g));
	rb_ftpage_parse(&l, b.page, PAGE, &info, on_event, &g);
	ok(info.damaged && g.n == 0, "time extend cut by the commit size: damaged, nothing delivered");

	memset(&g, 0, sizeof(g));
	rb_ftpage_parse(&l, b.page, 10, &info, on_event, &g);
	ok(info.damaged && g.n == 0, "a page shorter than its header: damaged");

	struct rb_ftpage_layout bad;
	ok(rb_ftpage_layout_parse(&bad, "field: u64 timestamp; offset:0; size:8;", 40, PAGE, 0) < 0 &&
	   rb_ftpage_layout_parse(&bad, NULL, 0, PAGE, 0) < 0,
	   "a header_page without commit or data is refused");
}

int main(void)
{
	all_encodings(HP64, 0, "64-bit little-endian");
	all_encodings(HP64, 1, "64-bit big-endian");
	all_encodings(HP32, 0, "32-bit little-endian");
	missed();
	abs_top_bits();
	damaged();
	return done_testing();
}
