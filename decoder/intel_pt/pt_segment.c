/*
 * pt_segment.c - decoding in parallel, within the second part of the Intel
 * PT decoder (intel_pt.c has the overview): a window's work, as
 * rb_pt_run_until asks for it (prepare_window; run_tasks, or launch_tasks
 * and join_tasks on the thread pool; finish_window), the segments of long
 * runs and the lanes that decode them, and the hand-over points where a
 * queue takes a lane over. Queues and lanes decode with pt_decode.c's
 * rb_pt_step.
 *
 * Segments: a long run of one queue is split too. Boundaries are the
 * first PSB after every RBDECODE_PT_SEGMENT bytes (64 KiB) of the run,
 * chosen from the data alone, and the segments are decoded the same way
 * whatever N is. A lane (a ptq of its own: decoder, images, section
 * cache, thread, events) decodes from its PSB. A decoder started at a
 * PSB does not know what the one before it held there (unproven code,
 * held events, a pending branch, the last CBR, the PTWRITE / power
 * events waiting for an address, libipt's time calibration, the time
 * it had reached), so a lane first seeks its start: the first branch
 * it emits with nothing unproven, held, pending or waiting, after
 * PWRE_WAIT blocks and a packet that proved code, past two PSBs and
 * two MTCs that ended cycles (warm_end), before the next map change
 * and within a segment's bytes. From there on the queue's decoder,
 * which came from further back, is in the same state, and the lane's
 * events are the ones it would make. Everything the lane made before
 * is dropped. The decoder before it stops at that branch (the same
 * trace offset, branch, and count of branches at that offset) if its
 * state there is the lane's (need_begin, awaited events, CBR, status,
 * thread and timeline place, libipt's time and lost MTC / CYC counts,
 * and a newest time not earlier than the lane's); what it makes after
 * is dropped, and the queue takes the lane over (adopt): its events,
 * dated no earlier than the queue's time, its decoder and state. A
 * lane that finds no start, or a decoder that passes a lane's start
 * or stands there in another state, just goes on: the lane is
 * dropped and the output is still the unsegmented one. A window first
 * adds lanes for the boundaries whose PSB's TSC is within it and that
 * the queue has not reached, lets them seek (phase one, nothing else
 * runs), then decodes queues and lanes to its end (phase two); with N
 * threads windows hold about as many events as N segments have bytes.
 * Gaps are a decoder's like any event: one in a lane's seek is its
 * predecessor's, so none is lost or doubled. The quick pass (libipt's
 * query decoder, no code walked) makes no branches: it hands over where it
 * would make one, at the events that do (tracing enabled, an asynchronous
 * disable or branch, an overflow with an address), with nothing unproven;
 * those are not seek points for a full decode, whose lanes start at
 * branches. Instruction samples
 * (--itrace=i) count instructions from the start of the trace, which a
 * lane cannot know: with them, and without timestamps, runs are decoded
 * whole.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include "pt_internal.h"

/* ------------------------------------------------------------ hand-over points */

static void handoff_of(const struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags,
		       struct handoff *h)
{
	memset(h, 0, sizeof(*h));
	h->off = q->emit_off;
	h->ord = q->emit_ord;
	h->from = from;
	h->to = to;
	h->flags = flags;
	h->need_begin = q->need_begin;
	h->nawait = q->nawait;
	h->pwre_blocks = q->pwre_blocks;
	h->status = q->status;
	h->cbr = q->cbr;
	h->pid_now = q->pid_now;
	h->tid_now = q->tid_now;
	h->cpu_pid = q->cpu_pid;
	h->cpu_tid = q->cpu_tid;
	h->tl_pos = q->tl_pos;
	h->qtsc = q->tsc;
	h->psb_wait = q->psb_wait;
	h->psb_next = pt->env.pwr_events ? q->psb_next : 0;   /* followed only for psb events */
	h->have_clk = q->have_clk;
	if (q->have_clk) {
		h->clk = q->clk;
		h->clk_base = q->clk_base;
		h->clk_time = q->clk_time;
	}
	dec_time_lost(pt, q->dec, &h->tsc, &h->lost_mtc, &h->lost_cyc);
}

static int handoff_same_place(const struct handoff *a, const struct handoff *b)
{
	return a->off == b->off && a->ord == b->ord && a->from == b->from && a->to == b->to && a->flags == b->flags;
}

static int handoff_same_state(const struct handoff *a, const struct handoff *b)
{
	return a->need_begin == b->need_begin && a->nawait == b->nawait && a->pwre_blocks == b->pwre_blocks &&
	       a->status == b->status && a->cbr == b->cbr && a->pid_now == b->pid_now && a->tid_now == b->tid_now &&
	       a->cpu_pid == b->cpu_pid && a->cpu_tid == b->cpu_tid && a->tl_pos == b->tl_pos && a->tsc == b->tsc &&
	       a->lost_mtc == b->lost_mtc && a->lost_cyc == b->lost_cyc && a->psb_wait == b->psb_wait &&
	       a->psb_next == b->psb_next && a->have_clk == b->have_clk &&
	       (!a->have_clk || (a->clk_time == b->clk_time && ptclock_agree(&a->clk, a->clk_base, &b->clk, b->clk_base)));
}

/*
 * A branch was emitted with nothing unproven or pending behind it: a lane
 * looking for its start takes the first such point after it has seen
 * PWRE_WAIT blocks and a packet proving code (everything before is its
 * predecessor's); a decoder with a target stops where that lane started,
 * if it stands there in the same state (what follows is the lane's).
 */
void at_handoff(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags)
{
	/* branches are counted per trace offset from when a lane start is looked for, or at */
	if (!q->dec || q->stopped || (!q->seek && !q->target))
		return;
	uint64_t off = q_pos(pt, q);
	if (off != q->emit_off) {
		q->emit_off = off;
		q->emit_ord = 0;
	} else {
		q->emit_ord++;
	}
	/* nor in a stretch resumed after missing code: its decoder's state is made up (pt_resync.c) */
	if (q->unproven || q->nheld || q->nheld_count[0] || q->nheld_count[1] || q->pending || q->rs_buf)
		return;
	struct handoff h;
	if (q->seek) {
		if (q->blocks <= PWRE_WAIT || (!q->proved && !pt->qry_dec) || q->nawait || q->psb_wait || q->need_begin ||
		    off <= q->seek_from)
			return;
		handoff_of(pt, q, from, to, flags, &h);
		q->start = h;
		q->seek = 0;
		drop_items(q, q->out_head);
		q->out_head = q->out_n = 0;
		q->n_insns = q->n_branches = q->n_insn_samples = q->n_gaps = 0;
		return;
	}
	if (pt->phase_seek)
		return;      /* lanes that found their starts wait for the others' */
	struct ptq *t = q->target;
	if (t == q->target_seen && off < q->target_off)
		return;
	while (t && (t->no_start || off > t->start.off))
		t = t->next;
	q->target = t;
	if (!t)
		return;
	q->target_seen = t;       /* its start and no_start stay as they are until the window ends */
	q->target_off = t->start.off;
	if (off != t->start.off)
		return;
	handoff_of(pt, q, from, to, flags, &h);
	if (!handoff_same_place(&h, &t->start))
		return;
	/*
	 * The lane's time is the newest it saw, this decoder's the newest
	 * of a longer past: the lane's events are dated no earlier than this
	 * decoder's time (adopt), which is right if the lane's is not later.
	 */
	if (!handoff_same_state(&h, &t->start) || t->start.qtsc > h.qtsc) {
		q->target = t->next;
		return;
	}
	q->stopped = 1;
	q->stop_keep = q->out_n - q->out_head;
	q->stop_n[0] = q->n_insns;
	q->stop_n[1] = q->n_branches;
	q->stop_n[2] = q->n_insn_samples;
	q->stop_n[3] = q->n_gaps;
	q->stop_time = q->time;
	q->stop_tsc = q->tsc;
}

/* ------------------------------------------------------------ windows */

/* The first map-changing record at or after @t (UINT64_MAX: none). */
uint64_t next_bound(const struct rb_pt *pt, uint64_t t)
{
	size_t lo = 0, hi = pt->nr_bounds;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pt->bounds[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pt->nr_bounds ? pt->bounds[lo] : UINT64_MAX;
}

/* Tasks (queues, lanes) taken one at a time, by whichever thread asks first, until none is left. */
static void decode_some(struct rb_pt *pt)
{
	struct pool *pl = &pt->pool;
	for (;;) {
		pthread_mutex_lock(&pl->mu);
		size_t i = pl->next++;
		uint64_t limit = pl->limit;
		pthread_mutex_unlock(&pl->mu);
		if (i >= pl->nr_tasks)
			return;
		rb_pt_step(pt, pl->tasks[i], limit);
	}
}

/* ------------------------------------------------------------ segments */

/* What a queue or lane decodes with (not its data, runs or events). */
void free_decoding(const struct rb_pt *pt, struct ptq *q)
{
	rs_leave(pt, q);
	if (q->dec)
		dec_free(pt, q->dec);
	q->dec = NULL;
	if (q->have_clk)
		ptclock_fini(&q->clk);
	q->have_clk = 0;
	while (q->images) {
		struct proc_image *p = q->images;
		q->images = p->next;
		pt_image_free(p->img);
		free(p->secs);
		free(p);
	}
	q->img = NULL;
	if (q->iscache)
		pt_iscache_free(q->iscache);
	q->iscache = NULL;
	free(q->held);
	q->held = NULL;
	free(q->kinds);
	q->kinds = NULL;
}

/* A lane's item array (emptied) kept for the next lane, or freed if enough are kept. */
static void spare_items(struct rb_pt *pt, struct ptq *l)
{
	drop_items(l, l->out_head);
	if (l->out && pt->nr_spare < SPARE_ITEMS) {
		pt->spare[pt->nr_spare] = l->out;
		pt->spare_cap[pt->nr_spare++] = l->out_cap;
	} else {
		free(l->out);
	}
	l->out = NULL;
	l->out_cap = l->out_n = l->out_head = 0;
}

void free_lane(struct rb_pt *pt, struct ptq *l)
{
	free_decoding(pt, l);
	spare_items(pt, l);
	free(l);
}

/*
 * Where a decoder started at the PSB at run offset @base (config @c) keeps
 * time as one that came from further back does: libipt's time calibration
 * takes the cycles between two MTCs (and TSCs in PSB+), so past two PSBs,
 * and two MTCs that followed CYCs when the trace has CYCs (UINT64_MAX if
 * not before @end). Whether times then agree is checked again at the
 * hand-over.
 */
static uint64_t warm_end(const struct pt_config *c, uint64_t base, uint64_t end)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(c);
	uint64_t at = UINT64_MAX;
	int psbs = 0, mtcs = 0, good_mtcs = 0, cyc = 0, any_cyc = 0;
	if (!d)
		return end;
	if (pt_pkt_sync_set(d, 0) >= 0) {
		struct pt_packet k;
		uint64_t off = 0;
		while (base + off < end && pt_pkt_next(d, &k, sizeof(k)) >= 0) {
			if (k.type == ppt_psb) {
				psbs++;
			} else if (k.type == ppt_cyc) {
				cyc = any_cyc = 1;
			} else if (k.type == ppt_mtc) {
				good_mtcs += mtcs && cyc;
				mtcs++;
				cyc = 0;
			}
			if (pt_pkt_get_offset(d, &off) < 0)
				break;
			if (psbs >= 2 && (any_cyc ? good_mtcs >= 2 : mtcs >= 1)) {
				at = base + off;
				break;
			}
		}
	}
	pt_pkt_free_decoder(d);
	return at;
}

#define CACHE_LINE 64
struct ptq *ptq_alloc(size_t n)
{
	void *p = NULL;
	if (n > SIZE_MAX / sizeof(struct ptq) - 1)
		return NULL;
	size_t size = (n * sizeof(struct ptq) + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
	if (posix_memalign(&p, CACHE_LINE, size))
		return NULL;
	return memset(p, 0, size);
}

/* A lane for the segment of @q's run from the PSB at offset @base, whose TSC is @tsc. */
static struct ptq *new_lane(struct rb_pt *pt, const struct ptq *q, uint64_t base, uint64_t tsc)
{
	struct ptq *l = ptq_alloc(1);
	if (!l)
		return NULL;
	l->idx = q->idx;
	l->cpu = q->cpu;
	l->tid = q->tid;
	l->buf = q->buf;
	l->len = q->len;
	l->chunks = q->chunks;           /* the queue's, as the data and runs: a lane frees none of them */
	l->nr_chunks = q->nr_chunks;
	l->runs = q->runs;
	l->nr_runs = q->nr_runs;
	l->cur_run = q->cur_run;
	l->spool_fd = -1;
	l->pid_now = l->tid_now = -1;
	/* the queue's place in the timeline is behind the lane's start: the lane catches up from there */
	l->cpu_pid = q->cpu_pid;
	l->cpu_tid = q->cpu_tid;
	l->tl_pos = q->tl_pos;
	l->tl_end = q->tl_end;
	l->is_lane = l->seek = 1;
	if (pt->nr_spare) {             /* an array already grown and touched: no reallocation, no page faults */
		l->out = pt->spare[--pt->nr_spare];
		l->out_cap = pt->spare_cap[pt->nr_spare];
	}
	l->dec_base = base;
	const struct run *run = &q->runs[q->cur_run - 1];
	l->seek_end = base + pt->seg_size;
	struct pt_config c;
	run_config(pt, q, run, base, &c);
	l->seek_from = warm_end(&c, base, l->seek_end);
	l->tsc = tsc;
	l->time = tsc_to_perf(pt, tsc);
	uint64_t b = next_bound(pt, l->time);
	l->seek_limit = b == UINT64_MAX ? UINT64_MAX : perf_to_tsc(pt, b);
	l->iscache = pt_iscache_alloc("rbdecode");
	l->dec = l->iscache ? dec_alloc(pt, &c) : NULL;
	if (!l->dec || start_clock(pt, l, &c)) {
		free_lane(pt, l);
		return NULL;
	}
	l->state = Q_SYNC;
	l->psb_next = run->buf_off + base;
	return l;
}

/*
 * Lanes for the segments of @q's run that start within the window (their
 * first TSC up to @window) and ahead of the queue's decoder.
 */
static int add_lanes(struct rb_pt *pt, struct ptq *q, uint64_t window)
{
	if (q->seek_at && !q->seek_lane) {      /* a queue started at a seek point: its lane, once reached */
		const struct run *run = &q->runs[q->cur_run - 1];
		uint64_t base = q->seek_at->pos - run->buf_off;
		uint64_t tsc = psb_tsc(q->buf + run->buf_off, run->size, base);
		if (tsc > window)
			return 0;
		struct ptq *l = new_lane(pt, q, base, tsc);
		if (!l)
			return q->err = -ENOMEM;
		q->lanes = q->target = l;
		q->seg_last = base;             /* the boundaries after it are the earlier decode's */
		q->seg_next = 0;
		q->seek_lane = 1;
		return 0;
	}
	if (pt->seek_lanes_only || !q->dec || !q->cur_run || (q->state != Q_SYNC && q->state != Q_DECODE))
		return 0;
	const struct run *run = &q->runs[q->cur_run - 1];
	struct ptq **tail = &q->lanes;
	while (*tail)
		tail = &(*tail)->next;
	for (;;) {
		if (!q->seg_next) {
			uint64_t from = q->seg_last + pt->seg_size;
			uint64_t b = from < run->size ? next_psb(q->buf + run->buf_off, run->size, from) : run->size;
			if (b >= run->size) {
				q->seg_next = UINT64_MAX;
				return 0;
			}
			q->seg_next = b;
			q->seg_next_tsc = psb_tsc(q->buf + run->buf_off, run->size, b);
		}
		if (q->seg_next == UINT64_MAX || q->seg_next_tsc > window)
			return 0;
		uint64_t at = q->seg_next;
		q->seg_last = at;
		q->seg_next = 0;
		if (q_pos(pt, q) >= at)
			continue;          /* the queue is there already */
		struct ptq *l = new_lane(pt, q, at, q->seg_next_tsc);
		if (!l)
			return q->err = -ENOMEM;
		/* the queue and lanes that have nothing to stop at stop at this one's start */
		for (struct ptq *o = q; o; o = o == q ? q->lanes : o->next)
			if (!o->target)
				o->target = l;
		*tail = l;
		tail = &l->next;
	}
}

/*
 * Queue @q takes over the lane whose start it stopped at: its events up to
 * there, the lane's after, the lane's decoder and state. The lane's times
 * are never earlier than the queue's (the decoder's time only grows).
 */
static int adopt(struct rb_pt *pt, struct ptq *q)
{
	struct ptq *l = q->lanes;
	drop_items(q, q->out_head + q->stop_keep);
	size_t n = l->stopped ? l->stop_keep : l->out_n - l->out_head;
	if (reserve_items(&q->out, &q->out_cap, q->out_n + n + 1))
		return q->err = -ENOMEM;
	uint64_t t = q->stop_time;
	/*
	 * A seek point: from here the queue makes what the lane makes, which a
	 * later decode reproduces by starting a lane at the same PSB with the
	 * queue's time here (seek_start). Its fields ride in an item's held
	 * event: from, to, flags the lane's first branch; insns its trace
	 * offset, power its rank there; payload the PSB's position in the
	 * queue's data and the decoder's clock.
	 */
	struct item *si = &q->out[q->out_n++];
	memset(si, 0, sizeof(*si));
	si->key = t;
	si->pid = si->tid = -1;
	si->h.kind = ITEM_SEEK;
	si->h.time = t;
	si->h.from = l->start.from;
	si->h.to = l->start.to;
	si->h.flags = l->start.flags;
	si->h.insns = l->start.off;
	si->h.power = (int)l->start.ord;
	si->h.payload[0] = l->runs[l->cur_run - 1].buf_off + (l->rs_buf ? l->rs_main_base : l->dec_base);
	si->h.payload[1] = q->stop_tsc;
	for (size_t j = 0; j < n; j++) {
		struct item *it = &q->out[q->out_n++];
		*it = l->out[l->out_head + j];
		if (it->key < t)
			it->key = t;
		/* branches and instruction samples have the packet clock's times, which agreed at the hand-over */
		if (it->gap) {
			if (it->gap->g.time_start < t)
				it->gap->g.time_start = t;
			if (it->gap->g.time_end < t)
				it->gap->g.time_end = t;
		}
	}
	uint64_t cnt[4] = { q->stop_n[0] + (l->stopped ? l->stop_n[0] : l->n_insns),
			    q->stop_n[1] + (l->stopped ? l->stop_n[1] : l->n_branches),
			    q->stop_n[2] + (l->stopped ? l->stop_n[2] : l->n_insn_samples),
			    q->stop_n[3] + (l->stopped ? l->stop_n[3] : l->n_gaps) };
	uint64_t tsc = q->stop_tsc;
	struct ptq keep = *q;
	free_decoding(pt, q);
	l->out_head += n;               /* moved, gaps and all: only what the lane made after its stop is dropped */
	spare_items(pt, l);
	*q = *l;
	free(l);
	q->idx = keep.idx;
	q->cpu = keep.cpu;
	q->tid = keep.tid;
	q->buf = keep.buf;
	q->len = keep.len;
	q->cap = keep.cap;
	q->spool_fd = keep.spool_fd;
	q->map_len = keep.map_len;
	q->released = keep.released;
	q->chunks = keep.chunks;
	q->nr_chunks = keep.nr_chunks;
	q->cap_chunks = keep.cap_chunks;
	q->runs = keep.runs;
	q->nr_runs = keep.nr_runs;
	q->cur_run = keep.cur_run;
	q->out = keep.out;
	q->out_head = keep.out_head;
	q->out_n = keep.out_n;
	q->out_cap = keep.out_cap;
	q->tk = keep.tk;
	q->tk_head = keep.tk_head;
	q->tk_n = keep.tk_n;
	q->tk_cap = keep.tk_cap;
	q->seg_last = keep.seg_last;
	q->seg_next = keep.seg_next;
	q->seg_next_tsc = keep.seg_next_tsc;
	q->lanes = q->next;
	q->next = NULL;
	q->is_lane = 0;
	q->n_insns = cnt[0];
	q->n_branches = cnt[1];
	q->n_insn_samples = cnt[2];
	q->n_gaps = cnt[3];
	if (q->stopped) {
		q->stop_keep = q->out_n - q->out_head;
		memcpy(q->stop_n, cnt, sizeof(cnt));
		if (q->stop_tsc < tsc) {
			q->stop_tsc = tsc;
			q->stop_time = t;
		}
	}
	if (q->tsc < tsc) {
		q->tsc = tsc;
		q->time = t;
	}
	if (q->done_time < t)
		q->done_time = t;
	for (struct proc_image *p = q->images; p; p = p->next)
		p->q = q;
	pt->handoffs++;
	return 0;
}

/*
 * A queue started at a seek point (seek_start) takes its lane over only if
 * the lane started where the earlier decode's did: else what follows would
 * not be that decode's, and decoding stops (pt->seek_failed: the caller
 * decodes from the start instead).
 */
static int seek_check(struct rb_pt *pt, struct ptq *q)
{
	const struct rb_seek_ev *s = q->seek_at;
	const struct ptq *l = q->lanes;
	q->seek_at = NULL;
	if (l->seek || l->no_start || l->start.off != s->start_off || l->start.ord != s->start_ord ||
	    l->start.from != s->start_from || l->start.to != s->start_to || l->start.flags != s->start_flags) {
		pt->env.st->seek_failed = 1;
		return q->err = PD_ERR_INVAL;
	}
	return 0;
}

/*
 * Queue @q starts at seek point @s: it decodes nothing itself and stands
 * "stopped" at the start of a lane from the seek point's PSB, with the
 * time the earlier decode's queue had there, so that taking the lane over
 * (adopt) makes what that decode made. The lane is made by add_lanes when
 * a window reaches the PSB, as every lane is. 0, or -1 when the seek point
 * is not in the queue's data (another recording).
 */
int seek_start(struct rb_pt *pt, struct ptq *q, const struct rb_seek_ev *s)
{
	size_t r;
	for (r = 0; r < q->nr_runs; r++)
		if (q->runs[r].buf_off <= s->pos && s->pos < q->runs[r].buf_off + q->runs[r].size)
			break;
	if (r == q->nr_runs || !pt->seg_size)
		return -1;
	const struct run *run = &q->runs[r];
	uint64_t base = s->pos - run->buf_off;
	if (next_psb(q->buf + run->buf_off, run->size, base) != base)
		return -1;
	q->cur_run = r + 1;
	q->state = Q_DECODE;
	q->seek_at = s;
	q->stopped = 1;
	q->stop_keep = 0;
	q->stop_time = s->time;
	q->stop_tsc = s->tsc;
	q->time = s->time;              /* windows need not go through the time before */
	return 0;
}

/* After a window: lanes no decoder stops at any more go; a queue that stopped takes its lane over. */
static int settle(struct rb_pt *pt, struct ptq *q)
{
	for (;;) {
		while (q->lanes && q->lanes != q->target) {
			struct ptq *l = q->lanes;
			q->lanes = l->next;
			free_lane(pt, l);
		}
		if (!q->stopped || !q->lanes)
			return 0;
		if (q->seek_at && seek_check(pt, q))
			return q->err;
		if (adopt(pt, q))
			return q->err;
	}
}

/* The tasks of a phase: lanes looking for their start, or every queue and lane that decodes. */
static int make_tasks(struct rb_pt *pt, int seek)
{
	struct pool *pl = &pt->pool;
	pl->nr_tasks = 0;
	for (size_t i = 0; i < pt->nr_q; i++)
		for (struct ptq *q = &pt->q[i]; q; q = q == &pt->q[i] ? pt->q[i].lanes : q->next) {
			if (seek ? !q->seek : q->seek || q->no_start)
				continue;
			if (pl->nr_tasks == pl->cap_tasks) {
				size_t n = pl->cap_tasks ? 2 * pl->cap_tasks : 64;
				struct ptq **v = realloc(pl->tasks, n * sizeof(*v));
				if (!v)
					return -ENOMEM;
				pl->tasks = v;
				pl->cap_tasks = n;
			}
			pl->tasks[pl->nr_tasks++] = q;
		}
	return 0;
}

static void *pool_thread(void *arg)
{
	struct rb_pt *pt = arg;
	struct pool *pl = &pt->pool;
	uint64_t seen = 0;
	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (pl->gen == seen && !pl->quit)
			pthread_cond_wait(&pl->go, &pl->mu);
		if (pl->quit)
			break;
		seen = pl->gen;
		pthread_mutex_unlock(&pl->mu);
		decode_some(pt);
		pthread_mutex_lock(&pl->mu);
		if (--pl->busy == 0)
			pthread_cond_signal(&pl->done);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/*
 * A spooled queue's pages the decoder is done with go back to the kernel
 * (see spool_payload in pt_gather.c), RELEASE_BATCH bytes at a time: each
 * madvise flushes the TLB of every core the process runs on.
 */
#define RELEASE_BATCH (UINT64_C(4) << 20)
static void release_decoded(struct rb_pt *pt, struct ptq *q)
{
	if (!q->map_len)
		return;
	uint64_t pos = q->len;
	if (q->state != Q_DONE) {   /* the decoder's position, else the start of the run it takes next */
		if (q->dec && q->cur_run)
			pos = q->runs[q->cur_run - 1].buf_off + q_pos(pt, q);
		else if (q->seek_at)    /* its lane's start, which it takes over */
			pos = q->seek_at->pos;
		else if (q->cur_run < q->nr_runs)
			pos = q->runs[q->cur_run].buf_off;
		else if (q->cur_run)
			pos = q->runs[q->cur_run - 1].buf_off;
		pos = pos > (UINT64_C(1) << 16) ? pos - (UINT64_C(1) << 16) : 0;
	}
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t upto = pos / page * page;
	if (upto > q->released && (upto - q->released >= RELEASE_BATCH || q->state == Q_DONE)) {
		madvise(q->buf + q->released, (size_t)(upto - q->released), MADV_DONTNEED);
		q->released = upto;
	}
}

/* The pool's threads start on the tasks, decoding up to TSC @limit (join_tasks waits for them). */
void launch_tasks(struct rb_pt *pt, uint64_t limit)
{
	struct pool *pl = &pt->pool;
	pthread_mutex_lock(&pl->mu);
	pl->limit = limit;
	pl->next = 0;
	pl->busy = pl->n;
	pl->gen++;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
}

/* This thread decodes the tasks the pool has not taken, then waits until all are done. */
void join_tasks(struct rb_pt *pt)
{
	struct pool *pl = &pt->pool;
	decode_some(pt);
	pthread_mutex_lock(&pl->mu);
	while (pl->busy)
		pthread_cond_wait(&pl->done, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
}

/* The tasks decoded up to TSC @limit: by this thread alone, or with the pool's. */
void run_tasks(struct rb_pt *pt, uint64_t limit)
{
	struct pool *pl = &pt->pool;
	if (!pl->n) {
		for (size_t i = 0; i < pl->nr_tasks; i++)
			rb_pt_step(pt, pl->tasks[i], limit);
	} else {
		launch_tasks(pt, limit);
		join_tasks(pt);
	}
}

/*
 * Every queue decoded up to TSC @limit: prepare_window, run_tasks (or
 * launch_tasks ... join_tasks), finish_window. With segments, in two phases:
 * the window's new lanes find their starts (everything before a lane's start
 * is its predecessor's: prepare_window), then queues and lanes decode, each
 * stopping at the start of the lane after it, and queues take over the lanes
 * they reached (finish_window).
 */
int prepare_window(struct rb_pt *pt, uint64_t limit)
{
	struct pool *pl = &pt->pool;
	if (pt->seg_size) {
		for (size_t i = 0; i < pt->nr_q; i++)
			if (add_lanes(pt, &pt->q[i], limit) && !pt->failed)
				pt->failed = pt->q[i].err;
		if (pt->failed)
			return pt->failed;
		if (make_tasks(pt, 1))
			return pt->failed = -ENOMEM;
		pt->phase_seek = 1;
		run_tasks(pt, 0);
		pt->phase_seek = 0;
		for (size_t i = 0; i < pl->nr_tasks; i++)
			if (pl->tasks[i]->seek) {
				pl->tasks[i]->seek = 0;
				pl->tasks[i]->no_start = 1;
			}
	}
	if (make_tasks(pt, 0))
		return pt->failed = -ENOMEM;
	for (size_t i = 0; i < pt->nr_q; i++)    /* lanes were added, found their starts or none */
		for (struct ptq *q = &pt->q[i]; q; q = q == &pt->q[i] ? pt->q[i].lanes : q->next)
			q->target_seen = NULL;
	return 0;
}

int finish_window(struct rb_pt *pt, uint64_t *made)
{
	for (size_t i = 0; i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		for (struct ptq *l = q->lanes; l; l = l->next)
			if (l->err && !pt->failed)
				pt->failed = l->err;
		if (settle(pt, q) && !pt->failed)
			pt->failed = q->err;
		struct rb_session_stats *st = pt->env.st;
		st->instructions += q->n_insns;
		st->branches += q->n_branches;
		st->insn_samples += q->n_insn_samples;
		*made += q->n_branches + q->n_insn_samples + q->n_gaps;
		q->n_insns = q->n_branches = q->n_insn_samples = q->n_gaps = 0;
		if (q->err && !pt->failed)
			pt->failed = q->err;
		release_decoded(pt, q);
	}
	return pt->failed;
}

int start_pool(struct rb_pt *pt, int jobs)
{
	struct pool *pl = &pt->pool;
	if (jobs <= 1)
		return 0;
	if (jobs > 256)
		jobs = 256;
	pl->th = calloc((size_t)jobs - 1, sizeof(*pl->th));
	if (!pl->th)
		return PD_ERR_NOMEM;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_cond_init(&pl->go, NULL);
	pthread_cond_init(&pl->done, NULL);
	for (int i = 0; i < jobs - 1; i++) {
		if (pthread_create(&pl->th[i], NULL, pool_thread, pt))
			break;       /* fewer threads: the same output, later */
		pl->n++;
	}
	return 0;
}
