/*
 * test_ordered.c - decoder/session/ordered.c, the session's time-order queue:
 * records pushed out of order come out in time order, a round releases only
 * up to the previous round's newest time (the rest waits for the next round
 * or the end), equal times keep arrival order, a record older than one
 * already released is counted late and still delivered, record bytes are
 * copied (the caller's buffer may change after the push), the first non-zero
 * deliver result is returned while the round still releases its records, and
 * many records of mixed sizes go through the copy pool unchanged.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "decoder/session/ordered.h"
#include "tap.h"

struct got {
	uint64_t time[4096];
	uint64_t off[4096];   /* file_offset: which push this was */
	uint32_t val[4096];   /* first 4 bytes of the copy */
	size_t n;
	int stop_at;          /* deliver returns 7 on this call (1-based), 0: never */
};

static int deliver(void *ctx, const struct rb_oq_item *it)
{
	struct got *g = ctx;
	if (g->n < 4096) {
		g->time[g->n] = it->time;
		g->off[g->n] = it->file_offset;
		memcpy(&g->val[g->n], it->data, sizeof(uint32_t));
	}
	g->n++;
	return g->stop_at && (int)g->n == g->stop_at ? 7 : 0;
}

static int push(struct rb_oq *q, uint64_t time, uint64_t off)
{
	uint32_t v = (uint32_t)(off * 10 + 1);
	return rb_oq_push(q, time, off, 0, &v, sizeof(v));
}

static int same(const struct got *g, const uint64_t *off, size_t n)
{
	if (g->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (g->off[i] != off[i] || g->val[i] != off[i] * 10 + 1)
			return 0;
	return 1;
}

static void rounds(void)
{
	struct rb_oq q;
	struct got g = { .n = 0 };
	rb_oq_init(&q);
	/* round 1: times 30 10 20 */
	push(&q, 30, 0);
	push(&q, 10, 1);
	push(&q, 20, 2);
	ok(rb_oq_round(&q, deliver, &g) == 0 && g.n == 0, "first round releases nothing (no previous round)");
	/* round 2: 25 40 5 (5 is older than nothing released yet: not late) */
	push(&q, 25, 3);
	push(&q, 40, 4);
	push(&q, 5, 5);
	ok(rb_oq_round(&q, deliver, &g) == 0, "second round returns 0");
	static const uint64_t r2[] = { 5, 1, 2, 3, 0 };   /* times 5 10 20 25 30: up to round 1's max 30 */
	ok(same(&g, r2, 5), "second round releases up to the first round's newest, in time order (%zu released)", g.n);
	ok(q.late == 0, "nothing late so far");
	ok(q.n == 1, "one record (time 40) waits");
	/* a late record: older than 30, already released */
	push(&q, 15, 6);
	ok(q.late == 1, "a record older than one released counts late");
	push(&q, 35, 7);
	ok(rb_oq_round(&q, deliver, &g) == 0, "third round returns 0");
	static const uint64_t r3[] = { 5, 1, 2, 3, 0, 6, 7, 4 };   /* then 15 (late) 35 40 */
	ok(same(&g, r3, 8), "third round releases the late record first, then up to 40");
	ok(q.n == 0 && q.bytes == 0, "queue empty, no bytes held (%zu, %zu)", q.n, q.bytes);
	ok(q.peak_bytes == 6 * sizeof(uint32_t), "peak bytes %zu", q.peak_bytes);
	rb_oq_free(&q);
}

static void ties_and_copies(void)
{
	struct rb_oq q;
	struct got g = { .n = 0 };
	rb_oq_init(&q);
	uint32_t buf = 111;
	rb_oq_push(&q, 50, 100, 3, &buf, sizeof(buf));
	buf = 222;   /* the queue holds a copy */
	rb_oq_push(&q, 50, 101, 3, &buf, sizeof(buf));
	/* 40 equal times behind and in front of others: more than the insertion sort's 16 */
	for (uint64_t i = 0; i < 40; i++)
		push(&q, i % 2 ? 50 : 49, 200 + i);
	ok(rb_oq_flush_all(&q, deliver, &g) == 0 && g.n == 42, "flush_all releases all 42");
	int order = 1;
	size_t k = 0;
	for (uint64_t i = 0; i < 40; i += 2)   /* time 49: offsets 200, 202, ... in push order */
		order &= g.off[k++] == 200 + i;
	order &= g.off[k++] == 100 && g.val[k - 1] == 111;
	order &= g.off[k++] == 101 && g.val[k - 1] == 222;
	for (uint64_t i = 1; i < 40; i += 2)
		order &= g.off[k++] == 200 + i;
	ok(order, "equal times keep push order; each record's bytes are the ones pushed");
	rb_oq_free(&q);
}

static void stop_code(void)
{
	struct rb_oq q;
	struct got g = { .n = 0, .stop_at = 2 };
	rb_oq_init(&q);
	for (uint64_t i = 0; i < 5; i++)
		push(&q, 100 - i, i);
	ok(rb_oq_flush_all(&q, deliver, &g) == 7, "the deliver function's non-zero result is returned");
	ok(g.n == 2, "no delivery after the stop (%zu delivered)", g.n);
	ok(q.n == 0 && q.bytes == 0, "the records are released all the same");
	ok(rb_oq_flush_all(&q, deliver, &g) == 0 && g.n == 2, "an empty queue delivers nothing");
	rb_oq_free(&q);
}

static void many(void)
{
	struct rb_oq q;
	struct got g = { .n = 0 };
	rb_oq_init(&q);
	uint8_t big[70000];
	uint64_t x = 12345;
	int pushed = 1;
	for (uint64_t r = 0; r < 4; r++) {
		for (uint64_t i = 0; i < 1000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t t = r * 1000 + (x >> 33) % 1500;   /* overlaps the next round */
			uint32_t size = 4 + (uint32_t)((x >> 20) % 3 ? (x >> 40) % 200 : (x >> 40) % 70000);
			uint32_t v = (uint32_t)((r * 1000 + i) * 10 + 1);
			memcpy(big, &v, sizeof(v));
			memset(big + 4, (int)(i & 0xff), size - 4);
			pushed &= rb_oq_push(&q, t, r * 1000 + i, 0, big, size) == 0;
		}
		rb_oq_round(&q, deliver, &g);
	}
	rb_oq_flush_all(&q, deliver, &g);
	ok(pushed && g.n == 4000, "4000 records of sizes up to 70000 in, 4000 out (%zu)", g.n);
	int sorted = 1, vals = 1;
	uint64_t late = 0, newest = 0;
	for (size_t i = 0; i < g.n && i < 4096; i++) {
		vals &= g.val[i] == g.off[i] * 10 + 1;
		if (i && g.time[i] < g.time[i - 1])
			late++;
		if (i && g.time[i] == g.time[i - 1] && g.off[i] < g.off[i - 1])
			sorted = 0;
		if (g.time[i] > newest)
			newest = g.time[i];
	}
	ok(vals, "every record's copy is its own");
	ok(sorted, "equal times in push order");
	ok(late == 0 && q.late == 0, "rounds overlapping by half a round: released in time order, none late (%llu / %llu)",
	   (unsigned long long)late, (unsigned long long)q.late);
	ok(q.bytes == 0, "no bytes held after the end");
	rb_oq_free(&q);
}

int main(void)
{
	rounds();
	ties_and_copies();
	stop_code();
	many();
	return done_testing();
}
