/*
 * test_imc.c - trace-imc buffers with known contents: in order, wrapped,
 * with a corrupt record, with a partial tail; privilege bits; timebase to
 * perf time.
 */
#include "config.h"
#include <string.h>
#include "decoder/imc/imc.h"
#include "tap.h"

static void be(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void rec(uint8_t *slot, uint64_t tb, uint64_t ip, uint64_t val, int corrupt)
{
	memset(slot, 0, RB_IMC_RECORD_SIZE);
	be(slot, tb);
	be(slot + 8, ip);
	be(slot + 16, val);
	for (int i = 0; i < 4; i++)
		be(slot + 24 + 8 * i, 100 + (uint64_t)i);
	be(slot + 56, corrupt ? 0 : (tb & RB_IMC_TB_MASK));
}

struct seen { uint64_t tb[16]; int n; int priv[16]; uint64_t t[16]; const char *gap[8]; uint64_t gap_rec[8]; int ng; };

static int on_rec(void *ctx, const struct rb_imc_record *r)
{
	struct seen *s = ctx;
	if (s->n < 16) {
		s->priv[s->n] = r->privilege;
		s->t[s->n] = r->time;
		s->tb[s->n++] = r->tb1;
	}
	return 0;
}

static int on_gap(void *ctx, const struct rb_imc_gap *g)
{
	struct seen *s = ctx;
	if (s->ng < 8) {
		s->gap_rec[s->ng] = g->records;
		s->gap[s->ng++] = g->reason;
	}
	return 0;
}

int main(void)
{
	uint8_t buf[6 * RB_IMC_RECORD_SIZE + 10];
	struct rb_imc_opts o = { .power10 = 1, .timebase_hz = 512000000, .anchor_tb = 1000, .anchor_ns = 5000000000ULL };
	struct seen s;
	struct rb_imc_sink sink = { &s, on_rec, on_gap };

	/* in order */
	for (int i = 0; i < 6; i++)
		rec(buf + i * RB_IMC_RECORD_SIZE, 1000 + (uint64_t)i, 0x1000 + (uint64_t)i, (uint64_t)(i % 4) << 62, 0);
	memset(&s, 0, sizeof(s));
	ok(rb_imc_decode(buf, 6 * RB_IMC_RECORD_SIZE, &o, &sink) == 0 && s.n == 6 && s.tb[0] == 1000 && s.tb[5] == 1005 &&
	   s.ng == 0, "six records in order, no gap");
	ok(s.priv[1] == 1 && s.priv[3] == 3, "POWER10 privilege bits from val[63:62]");
	ok(s.t[0] == 5000000000ULL && s.t[2] == 5000000003ULL, "timebase to perf time through the anchor (2 ticks at 512 MHz = 3.9 ns)");

	/* wrapped: 1006 and 1007 overwrote the first two slots */
	rec(buf, 1006, 0, 0, 0);
	rec(buf + RB_IMC_RECORD_SIZE, 1007, 0, 0, 0);
	memset(&s, 0, sizeof(s));
	rb_imc_decode(buf, 6 * RB_IMC_RECORD_SIZE, &o, &sink);
	ok(s.n == 6 && s.tb[0] == 1002 && s.tb[3] == 1005 && s.tb[4] == 1006 && s.tb[5] == 1007,
	   "a wrapped buffer comes out in time order");
	ok(s.ng == 1 && !strcmp(s.gap[0], "imc wrap"), "the wrap is a gap");

	/* a corrupt record (tb2 does not match) and a partial tail */
	rec(buf + 3 * RB_IMC_RECORD_SIZE, 1003, 0, 0, 1);
	memset(&s, 0, sizeof(s));
	rb_imc_decode(buf, sizeof(buf), &o, &sink);
	ok(s.n == 5, "the corrupt record is left out");
	int invalid = 0, partial = 0;
	for (int i = 0; i < s.ng; i++) {
		invalid += !strcmp(s.gap[i], "invalid record") && s.gap_rec[i] == 1;
		partial += !strcmp(s.gap[i], "partial record");
	}
	ok(invalid == 1 && partial == 1, "it is a gap of one record, and the 10-byte tail a partial one");

	/* POWER9: no privilege bits; no frequency: no time */
	struct rb_imc_opts p9 = { 0 };
	memset(&s, 0, sizeof(s));
	rb_imc_decode(buf, 2 * RB_IMC_RECORD_SIZE, &p9, &sink);
	ok(s.n == 2 && s.priv[0] == -1 && s.t[0] == 0, "POWER9: privilege unknown, no time without a frequency");
	ok(rb_imc_decode(buf, 0, &o, &sink) == 0, "an empty buffer decodes to nothing");
	return done_testing();
}
