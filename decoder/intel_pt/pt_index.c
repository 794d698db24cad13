/*
 * pt_index.c - the trace index of Intel PT: every PSB of every queue, found
 * by scanning the gathered data for the PSB pattern (no decoding), with its
 * position in the queue's data (perf's PSB offset), its file offset, its TSC
 * on the perf clock, its FUP (where execution stood) and the thread its CPU
 * ran then by the sideband. A PSB is where a decoder can start, so with the
 * index a time window can be decoded without what comes before it. Only
 * when a sink takes it: each queue's scan goes on as the session's time
 * reaches its next PSB (rb_pt_index_until hands the entries over merged
 * across queues in (time, queue, position) order, with the decoded events),
 * so the index holds one entry per queue, not one per PSB of the trace, and
 * the scanned pages of the spooled data are given back as the scan goes.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include "pt_internal.h"

/* The file offset of byte @pos of the queue's buffer (0 if no chunk holds it). */
static uint64_t file_offset_of(const struct ptq *q, uint64_t pos)
{
	for (size_t i = q->nr_chunks; i-- > 0;)
		if (q->chunks[i].buf_off <= pos && pos < q->chunks[i].buf_off + q->chunks[i].size)
			return q->chunks[i].file_offset + (pos - q->chunks[i].buf_off);
	return 0;
}

/* The thread CPU queue @q ran at perf time @t: the last timeline entry at or before it. */
static int32_t tid_at(const struct rb_pt *pt, const struct ptq *q, size_t tl0, uint64_t t)
{
	if (q->cpu < 0)
		return q->tid;
	size_t lo = tl0, hi = q->tl_end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pt->tl[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > tl0 && t ? pt->tl[lo - 1].tid : -1;
}

static int by_time(const void *a, const void *b)
{
	const struct pt_sync *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * A spooled queue's pages from @from to @to the scan has read go back to the
 * kernel (they are read again from the file when decoding gets there), so
 * that building the index does not make the whole trace resident.
 */
#define SCAN_RELEASE (UINT64_C(4) << 20)
static void give_back(const struct ptq *q, uint64_t from, uint64_t to)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t end = (q->map_len + page - 1) / page * page;
	from = from / page * page;
	to = to < end ? to / page * page : end;
	if (q->map_len && to > from)
		madvise(q->buf + from, (size_t)(to - from), MADV_DONTNEED);
}

/* Queue @q's next PSB into @x->next (x->have 0: the queue has no more). */
static void scan_next(const struct rb_pt *pt, const struct ptq *q, struct ix_scan *x)
{
	x->have = 0;
	for (; x->run < q->nr_runs; x->run++, x->at = 0) {
		const struct run *run = &q->runs[x->run];
		const uint8_t *p = q->buf + run->buf_off;
		uint64_t at = x->at < run->size ? next_psb(p, run->size, x->at) : run->size;
		if (at >= run->size)
			continue;
		if (run->buf_off + at - x->kept >= SCAN_RELEASE) {
			give_back(q, x->kept, run->buf_off + at);
			x->kept = (run->buf_off + at) / SCAN_RELEASE * SCAN_RELEASE;
		}
		struct psb_info pi;
		scan_psb(p, run->size, at, &pi);
		struct pt_sync *s = &x->next;
		s->time = pi.tsc && !pt->timeless ? tsc_to_perf(pt, pi.tsc) : 0;
		s->pos = perf_pos_of(q, run->buf_off + at);
		s->file_offset = file_offset_of(q, run->buf_off + at);
		s->ip = pi.fup;
		s->queue = q->idx;
		s->cpu = q->cpu;
		s->tid = tid_at(pt, q, x->tl0, s->time);
		x->at = at + 1;
		x->have = 1;
		return;
	}
	give_back(q, x->kept, UINT64_MAX);
}

int pt_index_start(struct rb_pt *pt)
{
	pt->ix = calloc(pt->nr_q ? pt->nr_q : 1, sizeof(*pt->ix));
	if (!pt->ix)
		return -ENOMEM;
	for (size_t i = 0; i < pt->nr_q; i++) {
		pt->ix[i].tl0 = pt->q[i].tl_pos;
		scan_next(pt, &pt->q[i], &pt->ix[i]);
	}
	return 0;
}

int rb_pt_index_until(struct rb_pt *pt, uint64_t time, int (*cb)(void *ctx, const struct rb_sync_ev *ev), void *ctx)
{
	if (!pt->ix)
		return 0;
	for (;;) {
		struct ix_scan *best = NULL;
		size_t bi = 0;
		for (size_t i = 0; i < pt->nr_q; i++) {
			struct ix_scan *x = &pt->ix[i];
			if (x->have && x->next.time <= time && (!best || by_time(&x->next, &best->next) < 0)) {
				best = x;
				bi = i;
			}
		}
		if (!best)
			return 0;
		const struct pt_sync *s = &best->next;
		struct rb_sync_ev ev = { .source = "intel_pt", .queue = s->queue, .cpu = s->cpu, .tid = s->tid,
					 .time = s->time, .aux_pos = s->pos, .file_offset = s->file_offset, .ip = s->ip };
		int rc = cb(ctx, &ev);
		if (rc)
			return rc;
		scan_next(pt, &pt->q[bi], best);
	}
}
