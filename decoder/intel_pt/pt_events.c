/*
 * pt_events.c - the Intel PT decoder's events on their way out, between
 * decoding (pt_decode.c) and the session's sink (intel_pt.c has the
 * overview). A decoding thread emits branches, instruction samples, PTWRITE
 * and power events and gaps to its queue's list of items; an event that
 * follows code no packet has proven yet is held (emit) until a packet
 * proves it (prove, deliver_held) or a loss drops it (drop_unproven). When
 * a window is done its items join those the session has still to take
 * (move_out: what was taken makes room first, so a queue holds one window's
 * items and those still waiting, never the run's), and rb_pt_run_until
 * takes them merged across queues in time order, the queue index breaking
 * ties (take_until), on the session's thread, which resolves their threads
 * and symbols in the session's machine. A lane's items go to its queue when the queue takes it over
 * (pt_segment.c).
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pt_internal.h"

/* ------------------------------------------------------------ events out */

/* Room in item array *@v (of *@cap) for @need items, by doubling. */
int reserve_items(struct item **v, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	struct item *w = realloc(*v, n * sizeof(*w));
	if (!w)
		return -ENOMEM;
	*v = w;
	*cap = n;
	return 0;
}

/*
 * A decoding thread's events go to its queue's list (the session takes
 * them in time order, rb_pt_run_until); its counts to the queue's.
 */
static struct item *push(struct ptq *q)
{
	if (q->out_n == q->out_cap) {
		if (q->out_head && q->out_head * 2 >= q->out_n) {   /* reuse what was taken */
			memmove(q->out, q->out + q->out_head, (q->out_n - q->out_head) * sizeof(*q->out));
			q->out_n -= q->out_head;
			q->out_head = 0;
		} else if (reserve_items(&q->out, &q->out_cap, q->out_n + 1)) {
			q->err = -ENOMEM;
			return NULL;
		}
	}
	struct item *it = &q->out[q->out_n++];
	it->key = q->time;
	it->pid = q->pid_now;
	it->tid = q->tid_now;
	it->gap = NULL;
	return it;
}

int emit_gap_ev(struct rb_pt *pt, struct ptq *q, const struct rb_gap_ev *g)
{
	q->n_gaps++;
	if (!pt->env.gap)
		return 0;
	struct gap_item *gi = malloc(sizeof(*gi));
	struct item *it = gi ? push(q) : NULL;
	if (!it) {
		free(gi);
		return q->err = -ENOMEM;
	}
	gi->g = *g;
	snprintf(gi->detail, sizeof(gi->detail), "%s", g->detail ? g->detail : "");
	gi->g.detail = gi->detail;
	it->h.kind = ITEM_GAP;
	it->gap = gi;
	return 0;
}

int emit_gap(struct rb_pt *pt, struct ptq *q, const char *reason, uint64_t t0, uint64_t t1,
	     uint64_t bytes, const char *detail)
{
	struct rb_gap_ev g = { .time_start = t0, .time_end = t1, .cpu = q->cpu, .pid = q->pid_now,
			       .tid = q->tid_now, .source = "intel_pt", .reason = reason, .bytes_lost = bytes,
			       .file_offset = 0, .detail = detail };
	return emit_gap_ev(pt, q, &g);
}

static int deliver(struct rb_pt *pt, struct ptq *q, const struct held *h)
{
	if (h->kind == RB_EV_BRANCH)
		q->n_branches++;
	else if (h->kind == RB_EV_INSTRUCTION)
		q->n_insn_samples++;
	if (!pt->env.trace || (h->kind == RB_EV_BRANCH && pt->env.no_branches))
		return 0;
	struct item *it = push(q);
	if (!it)
		return q->err;
	it->h = *h;
	return 0;
}

/* An event: delivered now, or held while the code it follows is not proven. */
int emit(struct rb_pt *pt, struct ptq *q, const struct held *h)
{
	if (!q->unproven && !q->nheld && !q->nheld_count[0] && !q->nheld_count[1])
		return deliver(pt, q, h);
	if (!pt->env.trace) {     /* nobody wants them: only their number */
		if (h->kind == RB_EV_BRANCH || h->kind == RB_EV_INSTRUCTION)
			q->nheld_count[h->kind == RB_EV_BRANCH]++;
		return 0;
	}
	if (q->nheld == q->cap_held) {
		size_t n = q->cap_held ? 2 * q->cap_held : 64;
		struct held *v = realloc(q->held, n * sizeof(*v));
		if (!v)
			return q->err = -ENOMEM;
		q->held = v;
		q->cap_held = n;
	}
	q->held[q->nheld++] = *h;
	return 0;
}

int emit_branch(struct rb_pt *pt, struct ptq *q, uint64_t from, uint64_t to, uint32_t flags, uint64_t time)
{
	/*
	 * The quick pass walks no code: the branches it would see are not
	 * all. Where it would make one (at an event), a lane may hand over: a
	 * place as exact as a branch's, and nothing is unproven there.
	 */
	if (pt->qry_dec) {
		if (pt->seg_size)
			at_handoff(pt, q, from, to, flags);
		return 0;
	}
	if (!pt->env.trace) {      /* nobody takes events (gaps, info): only their number, as emit counts */
		q->since = 0;
		if (!q->unproven)
			q->since_proven = 0;
		if (!q->unproven && !q->nheld && !q->nheld_count[0] && !q->nheld_count[1])
			q->n_branches++;
		else
			q->nheld_count[1]++;
	} else {
		struct held h = { .kind = RB_EV_BRANCH, .from = from, .to = to, .time = time, .insns = q->since,
				  .flags = flags };
		q->since = 0;
		if (!q->unproven)
			q->since_proven = 0;
		if (emit(pt, q, &h))
			return q->err;
	}
	if (pt->seg_size)
		at_handoff(pt, q, from, to, flags);
	return 0;
}

/* A packet proved what was decoded since the last one: count it, and let its events out. */
__attribute__((noinline)) int deliver_held(struct rb_pt *pt, struct ptq *q)
{
	for (size_t i = 0; i < q->nheld; i++)
		if (deliver(pt, q, &q->held[i]))
			return q->err;
	q->nheld = 0;
	q->n_branches += q->nheld_count[1];
	q->n_insn_samples += q->nheld_count[0];
	q->nheld_count[0] = q->nheld_count[1] = 0;
	return 0;
}

/* A loss: what no packet proved goes into the gap. */
void drop_unproven(struct ptq *q)
{
	q->unproven = 0;
	q->nheld = 0;
	q->nheld_count[0] = q->nheld_count[1] = 0;
	q->since = q->since_proven;
	q->insn_left = q->insn_left_proven;
}

/* The gaps items @v[from, to) own, freed. */
void free_gaps(struct item *v, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++) {
		free(v[j].gap);
		v[j].gap = NULL;
	}
}

/* Items from @from on are dropped. */
void drop_items(struct ptq *q, size_t from)
{
	free_gaps(q->out, from, q->out_n);
	if (from < q->out_n)
		q->out_n = from;
	if (q->out_head > q->out_n)
		q->out_head = q->out_n;
}

/* ------------------------------------------------------------ to the session */

static void resolve(struct rb_pt *pt, struct rb_thread *t, uint64_t ip, struct rb_addr_loc *al)
{
	if (!ip || !t) {
		memset(al, 0, sizeof(*al));
		al->addr = ip;
		return;
	}
	rb_machine_resolve_ip(pt->env.m, t, ip, al);
	if (pt->env.perf_export)
		al->sym = rb_machine_export_sym(pt->env.m, al, al->addr);
}

/* A decoded event to the session's sink (this thread only: the machine is the session's). */
static int take(struct rb_pt *pt, const struct ptq *q, struct item *it)
{
	if (it->h.kind == ITEM_SEEK) {
		if (!pt->env.seek_point)
			return 0;
		struct rb_seek_ev s = { .source = "intel_pt", .queue = q->idx, .cpu = q->cpu, .time = it->h.time,
					.tsc = it->h.payload[1], .pos = it->h.payload[0],
					.aux_pos = perf_pos_of(q, it->h.payload[0]), .start_off = it->h.insns,
					.start_from = it->h.from, .start_to = it->h.to, .start_ord = (uint32_t)it->h.power,
					.start_flags = it->h.flags };
		return pt->env.seek_point(pt->env.ctx, &s);
	}
	if (it->h.kind == ITEM_GAP) {
		int rc = pt->env.gap(pt->env.ctx, &it->gap->g);
		free(it->gap);
		it->gap = NULL;
		return rc;
	}
	const struct held *h = &it->h;
	/*
	 * Field by field, once each: an initializer zeroes the struct first
	 * (a rep stos of 150 bytes per event, 5% of an export), and resolve
	 * sets every field of an address it is given.
	 */
	struct rb_trace_ev b;
	b.kind = h->kind;
	b.power = h->power;
	memcpy(b.payload, h->payload, sizeof(b.payload));
	b.time = h->time;
	b.cpu = q->cpu;
	b.queue = q->idx;
	b.source = "intel_pt";
	b.mods = pt->mods;
	b.from = h->from;
	b.to = h->to;
	b.flags = h->flags;
	b.insn_count = h->insns;
	b.cyc_count = 0;
	b.sample_style = 0;
	/*
	 * The thread, its main thread and comm: the last event's when it had the
	 * same pid and tid in this take_until call and no thread was made since
	 * (only the sideband, between calls, changes them otherwise)
	 */
	struct last_thread *lt = &pt->lt;
	size_t made = rb_machine_threads_made(pt->env.m);
	if (lt->pass == pt->take_pass && lt->made == made && lt->pid == it->pid && lt->tid == it->tid) {
		b.thread = lt->thread;
		b.main_thread = lt->main_thread;
		b.comm = lt->comm;
	} else {
		b.thread = rb_machine_thread(pt->env.m, it->pid, it->tid, 1);
		if (!b.thread)
			return -ENOMEM;
		b.main_thread = rb_machine_main_thread(pt->env.m, b.thread);
		b.comm = rb_machine_sample_comm(pt->env.m, b.thread);
		*lt = (struct last_thread){ .pass = pt->take_pass, .made = rb_machine_threads_made(pt->env.m),
					    .pid = it->pid, .tid = it->tid, .thread = b.thread,
					    .main_thread = b.main_thread, .comm = b.comm };
	}
	if (pt->env.no_symbols) {       /* addresses only (a count, say): no call per address */
		b.from_al = (struct rb_addr_loc){ .addr = h->from };
		b.to_al = (struct rb_addr_loc){ .addr = h->kind == RB_EV_BRANCH ? h->to : 0 };
	} else {
		resolve(pt, b.thread, h->from, &b.from_al);
		if (h->kind == RB_EV_BRANCH)
			resolve(pt, b.thread, h->to, &b.to_al);
		else
			memset(&b.to_al, 0, sizeof(b.to_al));
	}
	return pt->env.trace(pt->env.ctx, &b);
}

/*
 * The events of finished windows (tk) with keys up to @key, merged across
 * queues in (key, queue index) order. While the pool decodes the next window
 * (pt->overlap), the machine is shared with its threads: taken under
 * pt->mlock, let go every TAKE_LOCKED events for their image reads.
 */
#define TAKE_LOCKED 64
int take_until(struct rb_pt *pt, uint64_t key)
{
	unsigned locked = 0;
	int rc = 0;
	pt->take_pass++;
	while (!rc) {
		struct ptq *best = NULL, *next = NULL;    /* the two first queues in that order */
		for (size_t i = 0; i < pt->nr_q; i++) {
			struct ptq *q = &pt->q[i];
			if (q->tk_head == q->tk_n || q->tk[q->tk_head].key > key)
				continue;
			uint64_t k = q->tk[q->tk_head].key;
			if (!best || k < best->tk[best->tk_head].key) {
				next = best;
				best = q;
			} else if (!next || k < next->tk[next->tk_head].key) {
				next = q;
			}
		}
		if (!best)
			break;
		/* this queue's events go first up to the next queue's (on a tie, the lower index first) */
		uint64_t until = next ? next->tk[next->tk_head].key : key;
		int tie_ok = !next || best->idx < next->idx;
		while (best->tk_head < best->tk_n) {
			struct item *it = &best->tk[best->tk_head];
			if (it->key > key || it->key > until || (it->key == until && next && !tie_ok))
				break;
			best->tk_head++;
			if (pt->overlap && !locked++)
				pthread_mutex_lock(&pt->mlock);
			rc = take(pt, best, it);
			if (locked && (locked == TAKE_LOCKED || rc)) {
				pthread_mutex_unlock(&pt->mlock);
				locked = 0;
			}
			if (rc)
				break;
		}
		if (best->tk_head == best->tk_n)
			best->tk_head = best->tk_n = 0;
	}
	if (locked)
		pthread_mutex_unlock(&pt->mlock);
	return rc ? (pt->failed = rc) : 0;
}

/* What was taken makes room: tk holds what waits, from index 0. */
static void compact_tk(struct ptq *q)
{
	if (!q->tk_head)
		return;
	memmove(q->tk, q->tk + q->tk_head, (q->tk_n - q->tk_head) * sizeof(*q->tk));
	q->tk_n -= q->tk_head;
	q->tk_head = 0;
}

/* The window's list (out) and the waiting one (tk) change places, arrays and all. */
static void swap_lists(struct ptq *q)
{
	struct item *v = q->tk;
	size_t head = q->tk_head, n = q->tk_n, cap = q->tk_cap;
	q->tk = q->out;
	q->tk_head = q->out_head;
	q->tk_n = q->out_n;
	q->tk_cap = q->out_cap;
	q->out = v;
	q->out_head = head;
	q->out_n = n;
	q->out_cap = cap;
}

/*
 * Before a window when nothing is being decoded: the events still waiting
 * (tk) become the front of the window's list, which the decoder appends to,
 * so move_out hands the list over whole instead of copying the window
 * behind them (they wait when a window ends past the time asked for: a
 * few, moved to the front).
 */
void move_back(struct ptq *q)
{
	if (q->tk_head == q->tk_n || q->out_n)
		return;
	compact_tk(q);          /* they are few, the window many */
	swap_lists(q);
}

/*
 * Before a window decoded in the background (rb_pt_run_until), while the
 * session takes what still waits in tk: room for all of it at the front of
 * the window's list, so that what is left of it when the window is done
 * goes there (move_out_front) and the window is handed over whole.
 */
int front_room(struct ptq *q)
{
	size_t r = q->tk_n - q->tk_head;
	if (q->out_n != q->out_head)
		return 0;           /* (not at a window's start: no room, move_out_front copies) */
	if (reserve_items(&q->out, &q->out_cap, r + 1))
		return -ENOMEM;
	q->out_head = q->out_n = r;
	return 0;
}

/* A background window's events join those still waiting, which go in front of them if there is room. */
int move_out_front(struct ptq *q)
{
	size_t r = q->tk_n - q->tk_head;
	if (r && q->out_head >= r) {            /* (push may have used the room: then move_out copies) */
		memcpy(q->out + q->out_head - r, q->tk + q->tk_head, r * sizeof(*q->tk));
		q->out_head -= r;
		q->tk_head = q->tk_n;
	}
	return move_out(q);
}

/* A finished window's events join those the session has still to take (tk); out is empty again. */
int move_out(struct ptq *q)
{
	size_t n = q->out_n - q->out_head;
	if (q->tk_head == q->tk_n) {            /* all taken: the arrays change places */
		swap_lists(q);
	} else if (n) {
		compact_tk(q);
		if (reserve_items(&q->tk, &q->tk_cap, q->tk_n + n))
			return -ENOMEM;
		memcpy(q->tk + q->tk_n, q->out + q->out_head, n * sizeof(*q->out));
		q->tk_n += n;
	}
	q->out_head = q->out_n = 0;
	return 0;
}
