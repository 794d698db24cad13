/*
 * imc.c - see imc.h. The buffer is scanned once to classify records (valid
 * or not) and find the wrap point: the valid record whose tb1 is not above
 * the previous valid one. Records after that point were written before the
 * wrap (they are older) and come first; records before it come after. A run
 * of invalid records is one gap; the wrap is a gap before the oldest record
 * (the records overwritten there are gone), sized when the start is known.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "imc.h"

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void read_record(const uint8_t *p, uint64_t off, const struct rb_imc_opts *o, struct rb_imc_record *r)
{
	r->tb1 = be64(p);
	r->ip = be64(p + 8);
	r->val = be64(p + 16);
	for (int i = 0; i < 4; i++)
		r->cpmc[i] = be64(p + 24 + 8 * i);
	r->tb2 = be64(p + 56);
	r->offset = off;
	r->privilege = o->power10 ? (int)(r->val >> 62) : -1;
	r->time = rb_imc_tb_to_ns(o, r->tb1);
}

static int valid(const struct rb_imc_record *r)
{
	return r->tb1 != 0 && (r->tb1 & RB_IMC_TB_MASK) == r->tb2;
}

uint64_t rb_imc_tb_to_ns(const struct rb_imc_opts *o, uint64_t tb)
{
	if (!o->timebase_hz)
		return 0;
	/* signed distance from the anchor, scaled without overflow for hours of ticks */
	int64_t d = (int64_t)(tb - o->anchor_tb);
	__int128 ns = (__int128)d * 1000000000 / (__int128)o->timebase_hz;
	return (uint64_t)((__int128)o->anchor_ns + ns);
}

/* Emit records [from, to) of @v, with runs of invalid ones as gaps. */
static int emit_range(const struct rb_imc_record *v, size_t from, size_t to, const struct rb_imc_sink *s)
{
	size_t bad_start = 0, bad = 0;
	uint64_t last_time = 0;
	for (size_t i = from; i <= to; i++) {
		int ok = i < to && valid(&v[i]);
		if (i < to && !ok) {
			if (!bad++)
				bad_start = i;
			continue;
		}
		if (bad) {
			struct rb_imc_gap g = { v[bad_start].offset, bad * RB_IMC_RECORD_SIZE, bad, "invalid record",
						last_time, i < to ? v[i].time : 0 };
			int rc = s->gap ? s->gap(s->ctx, &g) : 0;
			if (rc)
				return rc;
			bad = 0;
		}
		if (i < to) {
			int rc = s->record ? s->record(s->ctx, &v[i]) : 0;
			if (rc)
				return rc;
			last_time = v[i].time;
		}
	}
	return 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median timebase distance between consecutive valid records in time order; 0 if fewer than two. */
static uint64_t median_spacing(const struct rb_imc_record *v, size_t n, size_t wrap)
{
	uint64_t *d = malloc((n ? n : 1) * sizeof(*d));
	size_t nd = 0, prev = n;
	if (!d)
		return 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = (wrap + k) % n;      /* time order: [wrap, n) then [0, wrap) */
		if (!valid(&v[i]))
			continue;
		if (prev < n && v[i].tb1 > v[prev].tb1)
			d[nd++] = v[i].tb1 - v[prev].tb1;
		prev = i;
	}
	qsort(d, nd, sizeof(*d), by_u64);
	uint64_t m = nd ? d[nd / 2] : 0;
	free(d);
	return m;
}

/* The loss of a wrapped buffer: everything written before its oldest surviving record. */
static int wrap_gap(const struct rb_imc_record *v, size_t n, size_t wrap, const struct rb_imc_opts *o,
		    const struct rb_imc_sink *s)
{
	size_t oldest = wrap;
	while (oldest < n && !valid(&v[oldest]))
		oldest++;
	struct rb_imc_gap g = { v[wrap].offset, 0, 0, "imc wrap", 0, oldest < n ? v[oldest].time : 0 };
	uint64_t sp = median_spacing(v, n, wrap);
	if (o->start_tb && oldest < n && sp && v[oldest].tb1 > o->start_tb) {
		uint64_t periods = (v[oldest].tb1 - o->start_tb + sp / 2) / sp;   /* the oldest is the periods-th */
		g.records = periods ? periods - 1 : 0;
		g.bytes = g.records * RB_IMC_RECORD_SIZE;
		g.time_before = rb_imc_tb_to_ns(o, o->start_tb);
	}
	return s->gap(s->ctx, &g);
}

int rb_imc_decode(const uint8_t *buf, size_t len, const struct rb_imc_opts *o, const struct rb_imc_sink *s)
{
	size_t n = len / RB_IMC_RECORD_SIZE;
	struct rb_imc_record *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		read_record(buf + i * RB_IMC_RECORD_SIZE, i * RB_IMC_RECORD_SIZE, o, &v[i]);
	/* the wrap point: first valid record not newer than the valid one before it */
	size_t wrap = n, prev = n;
	for (size_t i = 0; i < n; i++) {
		if (!valid(&v[i]))
			continue;
		if (prev < n && v[i].tb1 <= v[prev].tb1) {
			wrap = i;
			break;
		}
		prev = i;
	}
	int rc;
	if (wrap == n) {
		rc = emit_range(v, 0, n, s);
	} else {
		/* [wrap, n) is older than [0, wrap): the hardware came round and overwrote from the start */
		rc = s->gap ? wrap_gap(v, n, wrap, o, s) : 0;
		if (!rc)
			rc = emit_range(v, wrap, n, s);
		if (!rc)
			rc = emit_range(v, 0, wrap, s);
	}
	if (!rc && len % RB_IMC_RECORD_SIZE && s->gap) {
		struct rb_imc_gap g = { n * RB_IMC_RECORD_SIZE, len % RB_IMC_RECORD_SIZE, 0, "partial record", 0, 0 };
		rc = s->gap(s->ctx, &g);
	}
	free(v);
	return rc;
}
