/*
 * pt_decode.c - decoding, the second part of the Intel PT decoder
 * (intel_pt.c has the overview): the runs gathering found (pt_gather.c) go
 * through libipt here, a queue or lane at a time up to the end of a window
 * (rb_pt_step, run by pt_segment.c's tasks). The events go out through
 * pt_events.c; the memory libipt reads comes from pt_image.c.
 *
 * Per queue, a libipt block decoder over the current run, configured from
 * AUXTRACE_INFO (mtc period, TSC/CTC ratio, nominal frequency, address
 * filters placed by pt_filter.c) and the CPU's errata (a filtered trace of
 * a CPU with erratum SKL014 takes the instruction decoder: see rb_pt_open).
 * Blocks end at every taken branch (end_on_call / end_on_jump), so a branch
 * is the last instruction of a block and its target the first of the next
 * one. Each queue follows its CPU's thread timeline itself.
 *
 * Losses are gaps in the session's model: a decode error ("no image for
 * 0x... in pid N", "decoder lost sync") from the last decoded time to the
 * next sync point with the bytes skipped, an overflow packet ("hardware
 * overflow"). Times: TSC to perf time with the AUXTRACE_INFO conversion.
 * Branches, instruction samples and the events that start or stop tracing
 * take the time of the packet that proves them from a packet clock beside
 * libipt (pt_clock.h: TSC, MTC, CYC as perf reads them); libipt's own time,
 * a little ahead, says when sideband is due and where losses start.
 *
 * PTWRITE and power events (perf's --itrace=w and p) go out the same way as
 * branches, held while unproven. An event without an IP of its own takes
 * the address where the decoder stands, the start of the next block, as
 * perf's do; a PWRE that an MWAIT follows (within PWRE_WAIT blocks) is
 * reported with it, at the MWAIT's FUP (perf binds them so). A CBR is
 * reported when the ratio changes (libipt repeats it at every PSB).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "pt_internal.h"

/* ------------------------------------------------------------ decoding */

/*
 * The decoder of a queue: libipt's block decoder, or its instruction
 * decoder when instruction samples are asked for (their addresses need
 * every instruction). An instruction is returned as a block of one, with
 * its bytes, so that what follows does not care which decoder ran.
 */
/*
 * The quick pass's decoder: libipt's query decoder, and the event the skim
 * fetched ahead (as libipt's block decoder fetches an event before it says
 * one is pending, which moves its time past the event's packets).
 */
struct qry {
	struct pt_query_decoder *d;
	struct pt_event ev;
	int have_ev, ev_status;
	uint64_t seg_tsc;
};

struct pt_query_decoder *qry_of(void *d)
{
	return ((struct qry *)d)->d;
}

void dec_free(const struct rb_pt *pt, void *d)
{
	if (pt->qry_dec) {
		pt_qry_free_decoder(qry_of(d));
		free(d);
	} else if (pt->insn_dec) {
		pt_insn_free_decoder(d);
	} else {
		pt_blk_free_decoder(d);
	}
}

void dec_set_image(const struct rb_pt *pt, void *d, struct pt_image *img)
{
	if (pt->qry_dec)
		return;                 /* the quick pass reads no code */
	if (pt->insn_dec)
		pt_insn_set_image(d, img);
	else
		pt_blk_set_image(d, img);
}

void *dec_alloc(const struct rb_pt *pt, const struct pt_config *c)
{
	if (pt->qry_dec) {
		struct qry *q = calloc(1, sizeof(*q));
		if (q && !(q->d = pt_qry_alloc_decoder(c))) {
			free(q);
			q = NULL;
		}
		return q;
	}
	return pt->insn_dec ? (void *)pt_insn_alloc_decoder(c) : (void *)pt_blk_alloc_decoder(c);
}

int dec_sync_set(const struct rb_pt *pt, void *d, uint64_t off)
{
	if (pt->qry_dec) {
		uint64_t ip;
		((struct qry *)d)->have_ev = 0;
		return pt_qry_sync_set(qry_of(d), &ip, off);
	}
	return pt->insn_dec ? pt_insn_sync_set(d, off) : pt_blk_sync_set(d, off);
}

int dec_time_lost(const struct rb_pt *pt, void *d, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	if (pt->qry_dec)
		return pt_qry_time(qry_of(d), tsc, lost_mtc, lost_cyc);
	return pt->insn_dec ? pt_insn_time(d, tsc, lost_mtc, lost_cyc) : pt_blk_time(d, tsc, lost_mtc, lost_cyc);
}

static int dec_time(const struct rb_pt *pt, void *d, uint64_t *tsc)
{
	uint32_t lost_mtc, lost_cyc;
	return dec_time_lost(pt, d, tsc, &lost_mtc, &lost_cyc);
}

static int dec_sync_forward(const struct rb_pt *pt, void *d)
{
	if (pt->qry_dec) {
		uint64_t ip;
		((struct qry *)d)->have_ev = 0;
		return pt_qry_sync_forward(qry_of(d), &ip);
	}
	return pt->insn_dec ? pt_insn_sync_forward(d) : pt_blk_sync_forward(d);
}

static int dec_event(const struct rb_pt *pt, void *d, struct pt_event *ev)
{
	if (pt->qry_dec) {
		struct qry *q = d;
		if (!q->have_ev)
			return pt_qry_event(q->d, ev, sizeof(*ev));
		q->have_ev = 0;
		*ev = q->ev;
		return q->ev_status;
	}
	return pt->insn_dec ? pt_insn_event(d, ev, sizeof(*ev)) : pt_blk_event(d, ev, sizeof(*ev));
}

/*
 * The quick pass (no code read): libipt's query decoder takes the branch
 * packets as they come, a TNT bit or a TIP at a time, without knowing which
 * instruction each belongs to, up to the next event or a change of its
 * time (looked at every SKIM_STEP packets: windows and the sideband see time
 * move, a little more coarsely than with the block decoder, and events,
 * the only things it reports, are met exactly). What it returns is a block
 * of no instructions.
 */
#define SKIM_STEP 64

static int qry_skim(struct qry *q, struct pt_block *b)
{
	memset(b, 0, sizeof(*b));
	unsigned k = 0;
	uint64_t t, cur = 0, prev = 0;
	uint32_t lm, lc;
	pt_qry_time(q->d, &cur, &lm, &lc);
	for (;;) {
		int taken, st = pt_qry_cond_branch(q->d, &taken);
		if (st == -pte_bad_query) {
			uint64_t ip;
			st = pt_qry_indirect_branch(q->d, &ip);
		}
		/*
		 * where a skim that returned at every change of the time would
		 * have begun its last call: the time before this packet's change,
		 * if it made one, else the current one (the block decoder's
		 * "decoded up to" time, which dates losses and run ends)
		 */
		int changed = pt_qry_time(q->d, &t, &lm, &lc) >= 0 && t != cur;
		if (changed) {
			prev = cur;
			cur = t;
		}
		q->seg_tsc = changed && st >= 0 && !(st & pts_event_pending) ? cur : changed ? prev : cur;
		if (st >= 0 && (st & pts_event_pending)) {
			q->ev_status = pt_qry_event(q->d, &q->ev, sizeof(q->ev));
			q->have_ev = q->ev_status >= 0;
			return q->have_ev ? st : q->ev_status;
		}
		if (st < 0)
			return st;
		/* back to the caller every SKIM_STEP packets, when the time moved: windows and sideband */
		if (++k >= SKIM_STEP && changed)
			return st;
	}
}

/* The quick pass's "decoded up to" time (TSC) after its last skim (see qry_skim). */
static uint64_t qry_seg_tsc(void *d)
{
	return ((struct qry *)d)->seg_tsc;
}

static int dec_next(const struct rb_pt *pt, void *d, struct pt_block *b)
{
	if (pt->qry_dec)
		return qry_skim(d, b);          /* d: a struct qry */
	if (!pt->insn_dec)
		return pt_blk_next(d, b, sizeof(*b));      /* libipt zeroes the block first, errors included */
	memset(b, 0, sizeof(*b));
	struct pt_insn in;
	memset(&in, 0, sizeof(in));
	int st = pt_insn_next(d, &in, sizeof(in));
	if (st < 0 && !in.size)
		return st;
	b->ip = b->end_ip = in.ip;
	b->isid = in.isid;
	b->mode = in.mode;
	b->iclass = in.iclass;
	b->ninsn = st < 0 ? 0 : 1;
	memcpy(b->raw, in.raw, sizeof(b->raw) < sizeof(in.raw) ? sizeof(b->raw) : sizeof(in.raw));
	b->size = in.size;
	b->truncated = 1;          /* the bytes are in raw */
	return st;
}

/*
 * The time a run's decoding first needs memory: the newest TSC before its
 * first packet that carries an IP or branch outside PSB+ (TIP.PGE, TIP,
 * FUP, TNT). libipt reads memory as it synchronizes, so a queue does not
 * synchronize before the sideband up to that time (its maps) has been
 * applied.
 */
static uint64_t first_tsc(const struct pt_config *c)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(c);
	uint64_t tsc = 0;
	int in_psb = 0;
	if (!d)
		return 0;
	if (pt_pkt_sync_forward(d) >= 0) {
		struct pt_packet p;
		for (int i = 0; i < 4096 && pt_pkt_next(d, &p, sizeof(p)) >= 0; i++) {
			if (p.type == ppt_tsc)
				tsc = p.payload.tsc.tsc;
			else if (p.type == ppt_psb)
				in_psb = 1;
			else if (p.type == ppt_psbend)
				in_psb = 0;
			else if (!in_psb && (p.type == ppt_tip_pge || p.type == ppt_tip || p.type == ppt_fup ||
					     p.type == ppt_tnt_8 || p.type == ppt_tnt_64))
				break;
		}
	}
	pt_pkt_free_decoder(d);
	return tsc;
}

/* A decoder's configuration for @run from its offset @from to its end. */
void run_config(const struct rb_pt *pt, const struct ptq *q, const struct run *run, uint64_t from,
		struct pt_config *c)
{
	pt_config_init(c);
	c->begin = q->buf + run->buf_off + from;
	c->end = q->buf + run->buf_off + run->size;
	if (pt->have_cpu) {
		c->cpu = pt->cpu;
		pt_cpu_errata(&c->errata, &c->cpu);
	}
	if (pt->nr_priv > P_TSC_CTC_D) {
		c->cpuid_0x15_eax = (uint32_t)pt->priv[P_TSC_CTC_D];
		c->cpuid_0x15_ebx = (uint32_t)pt->priv[P_TSC_CTC_N];
		uint64_t bits = pt->priv[P_MTC_FREQ_BITS];
		if (bits)
			c->mtc_freq = (uint8_t)((pt->config & bits) >> __builtin_ctzll(bits));
	}
	if (pt->nr_priv > P_MAX_NONTURBO_RATIO)
		c->nom_freq = (uint8_t)pt->priv[P_MAX_NONTURBO_RATIO];
	rb_pt_filters_config(&pt->filt, &c->addr_filter);
	if (!pt->insn_dec && !pt->qry_dec) {   /* the same bits mean other things to the other decoders */
		c->flags.variant.block.end_on_call = 1;
		c->flags.variant.block.end_on_jump = 1;
	}
}

/*
 * The packet clock over the bytes decoder config @c reads (from its first
 * PSB). It dates events only: when nobody takes them (gaps, info: branches
 * are counted, not built) it is not run, and clk_time follows libipt's time.
 */
int start_clock(struct rb_pt *pt, struct ptq *q, const struct pt_config *c)
{
	q->clk_known = 0;
	q->time_known = 0;
	if (!pt->env.trace || pt->qry_dec)    /* the quick pass makes no branches for it to date */
		return 0;
	struct ptclock_config cc = { .mtc_shift = c->mtc_freq, .tsc_ctc_n = c->cpuid_0x15_ebx,
				     .tsc_ctc_d = c->cpuid_0x15_eax, .max_nonturbo = c->nom_freq };
	if (ptclock_init(&q->clk, &cc, c->begin, c->end, 0))
		return -1;
	q->have_clk = 1;
	q->clk_base = q->dec_base;
	return 0;
}

static int start_run(struct rb_pt *pt, struct ptq *q)
{
	rs_leave(pt, q);
	q->rs_floor = 0;
	if (q->dec) {
		dec_free(pt, q->dec);
		q->dec = NULL;
	}
	if (q->have_clk) {
		ptclock_fini(&q->clk);
		q->have_clk = 0;
	}
	q->target = NULL;               /* lanes of the run before are no one's */
	if (q->cur_run >= q->nr_runs) {
		q->state = Q_DONE;
		return 0;
	}
	const struct run *run = &q->runs[q->cur_run++];
	int first = q->cur_run == 1;
	uint64_t t_end = q->done_time;   /* last decoded time of the previous run */
	struct pt_config c;
	run_config(pt, q, run, 0, &c);
	q->dec_base = 0;
	q->seg_last = q->seg_next = 0;
	uint64_t t = first_tsc(&c);
	if (t > q->tsc) {
		q->tsc = t;
		q->time = tsc_to_perf(pt, t);
	}
	char detail[200];
	if (!first && run->lost_before) {
		snprintf(detail, sizeof(detail), "queue %u: %" PRIu64 " bytes of trace between run %zu and run %zu were "
			 "overwritten or not recorded", q->idx, run->lost_before, q->cur_run - 2, q->cur_run - 1);
		if (emit_gap(pt, q, pt->priv[P_SNAPSHOT_MODE] ? "snapshot overwrite" : "aux hole", t_end, q->time,
			     run->lost_before, detail))
			return q->err;
	}
	if (!first && run->after_break) {
		snprintf(detail, sizeof(detail), "queue %u: the kernel truncated the AUX data (AUX record at file "
			 "offset %#" PRIx64 "); trace resumes at run %zu", q->idx, run->break_offset, q->cur_run - 1);
		struct rb_gap_ev g = { .time_start = t_end, .time_end = q->time, .cpu = q->cpu, .pid = q->pid_now,
				       .tid = q->tid_now, .source = "aux", .reason = "aux truncated",
				       .file_offset = run->break_offset, .detail = detail };
		if (emit_gap_ev(pt, q, &g))
			return q->err;
	}
	if (!first && run->trimmed) {
		snprintf(detail, sizeof(detail), "queue %u: run %zu repeated the last %" PRIu64 " bytes of the one "
			 "before (snapshot overlap), dropped; nothing lost", q->idx, q->cur_run - 1, run->trimmed);
		if (emit_gap(pt, q, "overlap trimmed", q->time, q->time, 0, detail))
			return q->err;
	}
	q->dec = dec_alloc(pt, &c);
	if (!q->dec)
		return q->err = -ENOMEM;
	if (start_clock(pt, q, &c))
		return q->err = -ENOMEM;
	if (q->img)
		dec_set_image(pt, q->dec, q->img->img);
	q->pending = 0;
	q->have_stash = 0;
	q->state = Q_SYNC;
	q->psb_wait = 0;
	q->psb_next = run->buf_off + next_psb(c.begin, run->size, 0);
	return 0;
}

/*
 * Two clocks: libipt's (q->tsc, q->time), which runs ahead of the blocks
 * and says when sideband must be applied and where losses start; and the
 * packet clock (q->clk_time), the time of the packet the decoder consumed
 * last, which dates branches, instruction samples and the events that end
 * or start tracing. Offsets here are the run's (q_pos).
 */
static inline void update_clock_at(struct rb_pt *pt, struct ptq *q, uint64_t off)
{
	uint64_t tsc;
	if (q->clk_known && off == q->clk_off)
		return;                 /* no packet read since (blocks of one TNT packet): the same time */
	if (q->have_clk && ptclock_at(&q->clk, off - q->clk_base, &tsc) >= 0) {
		if (!q->clk_known || tsc != q->clk_tsc)
			q->clk_time = tsc_to_perf(pt, tsc);
		q->clk_tsc = tsc;
		q->clk_off = off;
		q->clk_known = 1;
	} else {
		q->clk_time = q->time;
		q->clk_known = 0;
	}
}

static void update_clock(struct rb_pt *pt, struct ptq *q)
{
	update_clock_at(pt, q, q_pos(pt, q));
}

static __attribute__((noinline)) void read_time(struct rb_pt *pt, struct ptq *q, uint64_t off)
{
	uint64_t tsc;
	q->time_off = off;
	q->time_known = 1;
	if (dec_time(pt, q->dec, &tsc) >= 0 && tsc > q->tsc) {
		q->tsc = tsc;
		q->time = tsc_to_perf(pt, tsc);
	}
	update_clock_at(pt, q, off);
}

/* Both clocks move only as libipt reads packets: most blocks (the bits of one TNT) leave them as they are. */
static inline void update_time(struct rb_pt *pt, struct ptq *q)
{
	uint64_t off = q_pos(pt, q);
	if (!q->time_known || off != q->time_off)
		read_time(pt, q, off);
}

/* The thread a queue's trace belongs to now, and its image. */
static int set_thread(struct rb_pt *pt, struct ptq *q)
{
	int32_t pid = -1, tid = -1;
	if (q->cpu >= 0 && (pt->priv[P_PER_CPU_MMAPS] || q->tid < 0)) {
		pid = q->cpu_pid;
		tid = q->cpu_tid;
	}
	if (tid < 0 && q->tid >= 0) {
		pthread_mutex_lock(&pt->mlock);
		struct rb_thread *t = rb_machine_thread(pt->env.m, -1, q->tid, 0);
		pid = t && t->pid >= 0 ? t->pid : q->tid;
		pthread_mutex_unlock(&pt->mlock);
		tid = q->tid;
	}
	q->pid_now = pid;
	q->tid_now = tid;
	/* no known process (idle, or before the first switch record): an image that has the kernel only */
	struct proc_image *p = proc_image(pt, q, pid >= 0 ? pid : -1);
	if (!p)
		return q->err = -ENOMEM;
	if (p != q->img) {
		q->img = p;
		if (q->dec)
			dec_set_image(pt, q->dec, p ? p->img : NULL);
	}
	return 0;
}

static int emit_psb(struct rb_pt *pt, struct ptq *q);

/* The trace begin where decoding resumed after missing code (on_error), once the sideband is there. */
static int flush_begin(struct rb_pt *pt, struct ptq *q)
{
	if (!q->rs_begin)
		return 0;
	q->rs_begin = 0;
	return emit_branch(pt, q, 0, q->rs_begin_ip, q->rs_begin_flags, q->rs_begin_time);
}

static int on_error(struct rb_pt *pt, struct ptq *q, int err)
{
	char detail[800];
	uint64_t off = 0, t0 = q->time;
	off = q_pos(pt, q);
	const char *reason = "decoder lost sync";
	if (err == -pte_nomap) {
		reason = "no image";
		snprintf(detail, sizeof(detail), "no image for %#" PRIx64 " in pid %d (queue %u, trace offset %#" PRIx64 ")%s%s",
			 q->miss_ip, (int)q->miss_pid, q->idx, off, q->miss_why ? ": " : "",
			 q->miss_why ? q->miss_why : "");
	} else {
		snprintf(detail, sizeof(detail), "%s at trace offset %#" PRIx64 " (queue %u)",
			 pt_errstr(pt_errcode(err)), off, q->idx);
	}
	/* the trace began where the image is missing (perf shows that start too) */
	if (q->need_begin && err == -pte_nomap) {
		q->need_begin = 0;
		if (emit_branch(pt, q, 0, q->miss_ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN, q->clk_time))
			return q->err;
	}
	drop_unproven(q);       /* the loss starts after the last packet */
	if (flush_begin(pt, q))
		return q->err;
	if (q->psb_wait && emit_psb(pt, q))
		return q->err;
	if (q->pending) {
		q->pending = 0;
		/* it went where code is missing (perf shows that target), or its target is not known: the trace ends */
		if (err == -pte_nomap ? emit_branch(pt, q, q->pend_from, q->miss_ip, q->pend_flags, q->pend_time)
				      : emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_IP_FLAG_TRACE_END, q->pend_time))
			return q->err;
	}
	q->state = Q_SYNC;
	/* code is missing: decoding resumes at the next address the trace gives (pt_resync.c) */
	if (err == -pte_nomap) {
		uint64_t ip, pos;
		uint32_t flags;
		int r = rs_resume(pt, q, off, &ip, &pos, &flags);
		if (r < 0)
			return q->err = r;
		if (r > 0) {
			q->state = Q_DECODE;
			q->need_begin = 0;
			update_time(pt, q);
			/*
			 * libipt's time there is that of the made-up PSB+ (its TSC):
			 * the packet clock at the resume point is later, and what
			 * comes from the stretch is not dated before it
			 */
			update_clock_at(pt, q, pos);
			if (q->clk_known && q->clk_tsc > q->tsc) {
				q->tsc = q->clk_tsc;
				q->time = tsc_to_perf(pt, q->tsc);
			}
			if (set_thread(pt, q))
				return q->err;
			struct rb_gap_ev g = { .time_start = t0, .time_end = q->time, .cpu = q->cpu, .pid = q->pid_now,
					       .tid = q->tid_now, .source = "intel_pt", .reason = reason,
					       .bytes_lost = pos > off ? pos - off : 0, .detail = detail,
					       .no_binary = q->miss_nofile };
			if (emit_gap_ev(pt, q, &g))
				return q->err;
			if (!flags)             /* a TIP.PGE or an overflow: libipt's event begins the trace */
				return 0;
			/* perf's "tr strt" there, dated by its packet, in the thread the sideband names then */
			q->rs_begin = 1;
			q->rs_begin_ip = ip;
			q->rs_begin_flags = flags;
			q->rs_begin_time = q->clk_time;
			q->rs_begin_tsc = q->clk_known ? q->clk_tsc : q->tsc;
			return 0;
		}
	}
	/* the gap ends where decoding resumes: the next sync point (where a resumed stretch ends) */
	int st = q->rs_buf ? rs_back(pt, q) : dec_sync_forward(pt, q->dec);
	uint64_t off2 = off;
	if (st >= 0) {
		off2 = q->dec_base + dec_offset(pt, q->dec, 1);
		q->psb_next = q->runs[q->cur_run - 1].buf_off + off2;   /* the PSBs skipped were not decoded */
		update_time(pt, q);
		q->status = st;
		q->state = Q_DECODE;
		/* perf 6.1 shows no trace begin where it resynchronizes at a PSB after missing code */
		q->need_begin = err != -pte_nomap;
		if (set_thread(pt, q))
			return q->err;
	} else {
		off2 = q->runs[q->cur_run - 1].size;
		q->state = Q_NEXT_RUN;
	}
	struct rb_gap_ev g = { .time_start = t0, .time_end = q->time, .cpu = q->cpu, .pid = q->pid_now,
			       .tid = q->tid_now, .source = "intel_pt", .reason = reason,
			       .bytes_lost = off2 > off ? off2 - off : 0, .detail = detail,
			       .no_binary = err == -pte_nomap && q->miss_nofile };
	return emit_gap_ev(pt, q, &g);
}

static int resolve_pending(struct rb_pt *pt, struct ptq *q, uint64_t ip);

/*
 * Events waiting for an address go out, in order: with @ip where it is not
 * known yet (@ip 0: tracing is not at an instruction). With @keep_pwre,
 * from a PWRE on they stay (an MWAIT may still claim it).
 */
static int flush_await(struct rb_pt *pt, struct ptq *q, uint64_t ip, int keep_pwre)
{
	int k = 0;
	for (int i = 0; i < q->nawait; i++)
		if (!q->await_ip[i]) {
			q->await[i].from = ip;
			q->await_ip[i] = 1;
		}
	while (k < q->nawait && !(keep_pwre && q->await[k].kind == RB_EV_POWER && q->await[k].power == RB_PWR_PWRE))
		if (emit(pt, q, &q->await[k++]))
			return q->err;
	memmove(q->await, q->await + k, (size_t)(q->nawait - k) * sizeof(q->await[0]));
	memmove(q->await_ip, q->await_ip + k, (size_t)(q->nawait - k));
	q->nawait -= k;
	if (!q->nawait)
		q->pwre_blocks = 0;
	return 0;
}

static int await_event(struct rb_pt *pt, struct ptq *q, const struct held *h)
{
	if (q->nawait == AWAIT_MAX && flush_await(pt, q, 0, 0))
		return q->err;
	q->await_ip[q->nawait] = 0;
	q->await[q->nawait++] = *h;
	return 0;
}

/* A PTWRITE or power event from libipt (perf's --itrace=w / p samples). */
static int power_event(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev)
{
	struct held h = { .kind = RB_EV_POWER };
	uint64_t ip = 0;
	int has_ip = !ev->ip_suppressed;
	switch (ev->type) {
	case ptev_ptwrite:
		h.kind = RB_EV_PTWRITE;
		h.payload[0] = ev->variant.ptwrite.payload;
		/* libipt fills in the IP of a PTWRITE it bound without FUP: the config says whether FUPs come */
		h.payload[1] = pt->have_config ? !!(pt->config & 0x20) : has_ip;   /* fup_on_ptw */
		h.payload[2] = ev->variant.ptwrite.size;
		ip = ev->variant.ptwrite.ip;
		break;
	case ptev_cbr:
		if (ev->variant.cbr.ratio == q->cbr)
			return 0;
		q->cbr = ev->variant.cbr.ratio;
		h.power = RB_PWR_CBR;
		h.payload[0] = q->cbr;
		h.payload[1] = q->cbr * pt->cbr2khz;
		h.payload[2] = pt->max_nonturbo;
		has_ip = 0;
		break;
	case ptev_mwait:
		h.power = RB_PWR_MWAIT;
		h.payload[0] = ev->variant.mwait.hints & 0xff;   /* the fields perf keeps */
		h.payload[1] = ev->variant.mwait.ext & 3;
		ip = ev->variant.mwait.ip;
		break;
	case ptev_pwre:
		h.power = RB_PWR_PWRE;
		h.payload[0] = ev->variant.pwre.state;
		h.payload[1] = ev->variant.pwre.sub_state;
		h.payload[2] = ev->variant.pwre.hw;
		has_ip = 0;
		break;
	case ptev_exstop:
		h.power = RB_PWR_EXSTOP;
		h.payload[0] = has_ip;
		ip = ev->variant.exstop.ip;
		break;
	case ptev_pwrx:
		h.power = RB_PWR_PWRX;
		h.payload[0] = ev->variant.pwrx.deepest;
		h.payload[1] = ev->variant.pwrx.last;
		h.payload[2] = (ev->variant.pwrx.interrupt ? 1u : 0) | (ev->variant.pwrx.store ? 4u : 0) |
			       (ev->variant.pwrx.autonomous ? 8u : 0);
		has_ip = 0;
		break;
	default:
		return 0;
	}
	if (h.kind == RB_EV_PTWRITE ? !pt->env.ptwrites : !pt->env.pwr_events)
		return 0;
	/*
	 * The time of its packet: libipt dates some events itself; one without
	 * an IP it reports as it reads its packet (its time is the decoder's
	 * now); one bound to a FUP, once the blocks reached that IP (libipt has
	 * read past the FUP by then: the time of those blocks)
	 */
	uint64_t tsc = q->tsc;
	if (ev->has_tsc)
		tsc = ev->tsc;
	else if (!has_ip && dec_time(pt, q->dec, &tsc) < 0)
		tsc = q->tsc;
	h.time = tsc_to_perf(pt, tsc);
	/* a PWRE waiting just before this MWAIT belongs to its FUP, after it (perf's order) */
	struct held pwre;
	int with_pwre = h.power == RB_PWR_MWAIT && h.kind == RB_EV_POWER && has_ip && q->nawait &&
			q->await[q->nawait - 1].kind == RB_EV_POWER && q->await[q->nawait - 1].power == RB_PWR_PWRE;
	if (with_pwre)
		pwre = q->await[--q->nawait];
	if (h.power != RB_PWR_PWRE || h.kind != RB_EV_POWER)
		if (flush_await(pt, q, 0, 0))
			return q->err;
	if (!has_ip)
		return await_event(pt, q, &h);
	h.from = ip;
	if (emit(pt, q, &h))
		return q->err;
	if (with_pwre) {
		pwre.from = ip;
		pwre.time = h.time;
		return emit(pt, q, &pwre);
	}
	return 0;
}

/*
 * perf's "psb" events (--itrace=p): one per PSB+ decoded, dated by its TSC,
 * at its FUP's address (0 when tracing was off), with the PSB's offset in the
 * queue's data. libipt has no PSB event; the status updates it reports from a
 * PSB+ (CBR, and MODE.Exec once the blocks reached the FUP's address) show
 * that the decoder passed one, which is then found in the buffer
 * (q->psb_next). Its offset is perf's: the position in the queue's data,
 * its AUXTRACE payloads one after the other. As perf does, the event comes
 * when decoding has reached the FUP's address: after the branches before it.
 */
uint64_t perf_pos_of(const struct ptq *q, uint64_t pos)
{
	for (size_t i = q->nr_chunks; i-- > 0;)
		if (q->chunks[i].buf_off <= pos)
			return q->chunks[i].perf_pos + (pos - q->chunks[i].buf_off);
	return pos;
}

static int emit_psb(struct rb_pt *pt, struct ptq *q)
{
	struct held h = { .kind = RB_EV_POWER, .power = RB_PWR_PSB, .from = q->psb.fup,
			  .time = q->psb.tsc ? tsc_to_perf(pt, q->psb.tsc) : q->time };
	h.payload[0] = perf_pos_of(q, q->psb_pos);
	q->psb_wait = 0;
	if (q->psb.fup && resolve_pending(pt, q, q->psb.fup))
		return q->err;
	return emit(pt, q, &h);
}

/* Before libipt's event @ev, or the block at @ip (@ev NULL): the PSBs passed. */
static int psb_passed(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev, uint64_t ip)
{
	if (!pt->env.pwr_events)
		return 0;
	int at_fup = ev ? !ev->status_update || ev->type == ptev_exec_mode : ip == q->psb.fup;
	if (q->psb_wait && at_fup && emit_psb(pt, q))
		return q->err;
	if (!ev || q->psb_wait)
		return 0;
	const struct run *run = &q->runs[q->cur_run - 1];
	uint64_t end = run->buf_off + q_pos(pt, q);
	while (q->psb_next < end) {
		q->psb_pos = q->psb_next;
		q->psb_next = run->buf_off + next_psb(q->buf + run->buf_off, run->size, q->psb_pos - run->buf_off + PSB_LEN);
		scan_psb(q->buf + run->buf_off, run->size, q->psb_pos - run->buf_off, &q->psb);
		q->psb_wait = 1;
		/* the last one passed, with a FUP, is reported when the blocks reach its address */
		if (q->psb_next < end || !q->psb.fup || !ev->status_update || ev->type == ptev_exec_mode)
			if (emit_psb(pt, q))
				return q->err;
	}
	return 0;
}

static int on_event(struct rb_pt *pt, struct ptq *q, const struct pt_event *ev)
{
	if (psb_passed(pt, q, ev, 0))
		return q->err;
	uint64_t t_before = q->done_time > q->time ? q->time : q->done_time;
	if (ev->has_tsc && ev->tsc > q->tsc) {
		q->tsc = ev->tsc;
		q->time = tsc_to_perf(pt, ev->tsc);
	}
	update_clock(pt, q);       /* the decoder has read the event's packets */
	switch (ev->type) {
	case ptev_ptwrite: case ptev_cbr: case ptev_mwait: case ptev_pwre: case ptev_exstop: case ptev_pwrx:
		return power_event(pt, q, ev);
	case ptev_enabled: case ptev_disabled: case ptev_async_disabled: case ptev_async_branch: case ptev_overflow:
		/* what waits for an address gets the one tracing stands at (none where it starts) */
		if (q->nawait && flush_await(pt, q, ev->type == ptev_enabled || ev->type == ptev_overflow ? 0
						     : ev->type == ptev_async_branch ? ev->variant.async_branch.from
						     : ev->type == ptev_async_disabled ? ev->variant.async_disabled.at : 0, 0))
			return q->err;
		break;
	default:
		break;
	}
	switch (ev->type) {
	case ptev_enabled:
		q->need_begin = 0;
		if (q->pending) {
			q->pending = 0;
			if (emit_branch(pt, q, q->pend_from, 0, q->pend_flags | RB_IP_FLAG_TRACE_END, q->pend_time))
				return q->err;
		}
		return emit_branch(pt, q, 0, ev->variant.enabled.ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN,
				   q->clk_time);
	case ptev_disabled: {
		/* the branch that left the traced region: its target is in the packet, if not suppressed */
		uint64_t to = ev->ip_suppressed ? (q->pending ? direct_target(pt, q, q->pend_from) : 0)
						: ev->variant.disabled.ip;
		if (prove(pt, q))
			return q->err;
		if (!q->pending)
			return 0;
		q->pending = 0;
		return emit_branch(pt, q, q->pend_from, to, q->pend_flags | RB_IP_FLAG_TRACE_END, q->clk_time);
	}
	case ptev_async_disabled:
		/* the last branch went on to @at, where tracing stopped (the FUP proves the way there) */
		if (prove(pt, q))
			return q->err;
		if (resolve_pending(pt, q, ev->variant.async_disabled.at))
			return q->err;
		return emit_branch(pt, q, ev->variant.async_disabled.at, ev->ip_suppressed ? 0 : ev->variant.async_disabled.ip,
				   RB_IP_FLAG_BRANCH | RB_IP_FLAG_ASYNC | RB_IP_FLAG_TRACE_END, q->clk_time);
	case ptev_async_branch:
		if (prove(pt, q))
			return q->err;
		if (resolve_pending(pt, q, ev->variant.async_branch.from))
			return q->err;
		return emit_branch(pt, q, ev->variant.async_branch.from, ev->ip_suppressed ? 0 : ev->variant.async_branch.to,
				   RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_ASYNC | RB_IP_FLAG_INTERRUPT, q->clk_time);
	case ptev_overflow: {
		char detail[120];
		uint64_t off = q_pos(pt, q);
		snprintf(detail, sizeof(detail), "overflow packet at trace offset %#" PRIx64 " (queue %u): trace lost",
			 off, q->idx);
		q->pending = 0;
		drop_unproven(q);       /* the loss starts after the last packet */
		if (emit_gap(pt, q, "hardware overflow", t_before, q->time, 0, detail))
			return q->err;
		if (!ev->ip_suppressed) {
			q->need_begin = 0;
			return emit_branch(pt, q, 0, ev->variant.overflow.ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN,
					   q->clk_time);
		}
		q->need_begin = 1;
		return 0;
	}
	default:
		return 0;
	}
}

/* The branch that ended the previous block went to @ip. */
static int resolve_pending(struct rb_pt *pt, struct ptq *q, uint64_t ip)
{
	if (!q->pending)
		return 0;
	q->pending = 0;
	/* a conditional branch that fell through is not a branch taken */
	if ((q->pend_flags & RB_IP_FLAG_CONDITIONAL) && ip == q->pend_next)
		return 0;
	return emit_branch(pt, q, q->pend_from, ip, q->pend_flags, q->pend_time);
}

static int on_block(struct rb_pt *pt, struct ptq *q, const struct pt_block *b)
{
	if (q->blocks <= PWRE_WAIT)
		q->blocks++;
	if (q->psb_wait && psb_passed(pt, q, NULL, b->ip))
		return q->err;
	if (resolve_pending(pt, q, b->ip))
		return q->err;
	if (q->nawait && flush_await(pt, q, b->ip, ++q->pwre_blocks <= PWRE_WAIT))
		return q->err;
	if (!b->ninsn)
		return 0;
	if (q->need_begin) {
		q->need_begin = 0;
		if (emit_branch(pt, q, 0, b->ip, RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN, q->clk_time))
			return q->err;
	}
	q->unproven += b->ninsn;
	q->since += b->ninsn;
	if (pt->insn_period) {          /* the instruction decoder: one instruction per block */
		if (!q->insn_left)
			q->insn_left = pt->insn_period;
		if (--q->insn_left == 0) {
			update_time(pt, q);
			struct held h = { .kind = RB_EV_INSTRUCTION, .from = b->ip, .time = q->clk_time,
					  .insns = pt->insn_period };
			if (emit(pt, q, &h))
				return q->err;
		}
	}
	unsigned len;
	int direct;
	uint32_t k = block_branch(pt, q, b, &len, &direct);
	if (k && !direct && prove(pt, q))
		return q->err;
	if (k) {
		q->pending = 1;
		q->pend_from = b->end_ip;
		q->pend_next = len ? b->end_ip + len : 0;
		q->pend_flags = k;
		q->pend_time = q->clk_time;
	}
	return 0;
}

/*
 * The time (TSC) the sideband must have reached before @q may go on: the
 * start of its run before it synchronizes; an event it holds; otherwise,
 * with kernel trace, libipt's time (which runs a little ahead of the blocks
 * it returns, having read their packets). User-only trace waits at events
 * only: its thread can change only while tracing is off.
 */
static uint64_t wait_tsc(const struct rb_pt *pt, const struct ptq *q)
{
	if (q->state == Q_SYNC)
		return q->tsc;
	if (q->state != Q_DECODE)
		return 0;
	if (q->have_stash)
		return q->stash.type == ptev_enabled && q->stash.has_tsc ? q->stash.tsc : 0;
	return pt->user_only ? 0 : q->tsc;
}

/*
 * Before @q goes on past a point whose time is @x (TSC): the thread changes
 * of its CPU dated before @x (and within the window, up to @limit), applied
 * as the session applied sideband to a queue it had run up to each record's
 * time. Returns 1 if @x is beyond the window (the queue stops there), -1 on
 * failure, else 0.
 */
static int catch_up_tl(struct rb_pt *pt, struct ptq *q, uint64_t x, uint64_t limit)
{
	while (q->tl_pos < q->tl_end) {
		const struct tl_ent *e = &pt->tl[q->tl_pos];
		if (x <= e->tsc || e->tsc > limit)
			break;
		q->tl_pos++;
		q->cpu_pid = e->pid;
		q->cpu_tid = e->tid;
		/* a decoding queue takes the thread at its next block; one that syncs, when it does */
		if (q->state == Q_DECODE && set_thread(pt, q))
			return -1;
	}
	return x > limit;
}

static inline int catch_up(struct rb_pt *pt, struct ptq *q, uint64_t x, uint64_t limit)
{
	if (q->tl_pos == q->tl_end || x <= pt->tl[q->tl_pos].tsc)     /* the common case: nothing due */
		return x > limit;
	return catch_up_tl(pt, q, x, limit);
}

/* Decode queue or lane @q up to the end of the window, @window (TSC). */
int rb_pt_step(struct rb_pt *pt, struct ptq *q, uint64_t window)
{
	while (!q->err) {
		/* a lane looking for its start goes on to the next map change, then gives up */
		uint64_t limit = q->seek ? q->seek_limit : window;
		if (q->stopped)
			return 0;
		if (q->seek && q->dec && q_pos(pt, q) > q->seek_end)
			return 0;
		switch (q->state) {
		case Q_DONE:
			return 0;
		case Q_NEXT_RUN:
			if (q->is_lane)         /* the end of the run: the queue goes on when it has taken the lane */
				return 0;
			/* the data ended before the last branch's target: it is not known, so not reported */
			if (q->nawait && flush_await(pt, q, 0, 0))
				return q->err;
			if (flush_begin(pt, q))
				return q->err;
			if (q->psb_wait && emit_psb(pt, q))
				return q->err;
			q->pending = 0;
			drop_unproven(q);
			if (start_run(pt, q))
				return q->err;
			continue;
		case Q_SYNC: {
			int w = catch_up(pt, q, wait_tsc(pt, q), limit);
			if (w)
				return w < 0 ? q->err : 0;
			if (set_thread(pt, q))
				return q->err;
			int st = dec_sync_forward(pt, q->dec);
			if (st < 0) {
				if (st != -pte_eos) {
					char detail[160];
					snprintf(detail, sizeof(detail), "%s (queue %u, run %zu)", pt_errstr(pt_errcode(st)),
						 q->idx, q->cur_run - 1);
					if (emit_gap(pt, q, "decoder lost sync", q->time, q->time,
						     q->runs[q->cur_run - 1].size, detail))
						return q->err;
				}
				q->state = Q_NEXT_RUN;
				continue;
			}
			/* as perf: a run's first sync is not a trace begin (TIP.PGE is), a resync after an error is */
			q->status = st;
			q->state = Q_DECODE;
			update_time(pt, q);
			continue;
		}
		case Q_DECODE:
			break;
		}
		/* decoding resumed after missing code: the trace begins there, in the thread the sideband names */
		if (q->rs_begin) {
			int w = catch_up(pt, q, q->rs_begin_tsc, limit);
			if (w)
				return w < 0 ? q->err : 0;
			if (flush_begin(pt, q))
				return q->err;
		}
		/*
		 * libipt's time runs a little ahead of the blocks it returns (it
		 * has read their packets): with kernel trace it is what says when
		 * to let sideband catch up; user-only trace waits at events only.
		 */
		int w = catch_up(pt, q, wait_tsc(pt, q), limit);
		if (w)
			return w < 0 ? q->err : 0;
		if (q->tsc > limit)          /* the end of the window (user-only trace does not wait above) */
			return 0;
		int st = q->status;
		while (q->have_stash || (st & pts_event_pending)) {
			if (!q->have_stash) {
				st = dec_event(pt, q->dec, &q->stash);
				if (st < 0)
					break;
				q->have_stash = 1;
				q->status = st;
			}
			/*
			 * Tracing that resumes (TIP.PGE) later than the sideband applied
			 * so far waits for it: after a context switch it must resume in
			 * the thread the switch record names.
			 */
			/* a disable or anything else belongs to the thread that ran until now */
			if (q->stash.type == ptev_enabled && q->stash.has_tsc && catch_up(pt, q, q->stash.tsc, limit)) {
				if (q->err)
					return q->err;
				if (q->stash.tsc > q->tsc) {
					q->tsc = q->stash.tsc;
					q->time = tsc_to_perf(pt, q->tsc);
				}
				return 0;
			}
			q->have_stash = 0;
			if (on_event(pt, q, &q->stash))
				return q->err;
			st = q->status;
		}
		if (st >= 0) {
			struct pt_block b;
			q->done_time = q->time;
			st = dec_next(pt, q->dec, &b);
			if (pt->qry_dec && qry_seg_tsc(q->dec)) {
				uint64_t t = tsc_to_perf(pt, qry_seg_tsc(q->dec));
				if (t > q->done_time)
					q->done_time = t;
			}
			if (st >= 0) {
				update_time(pt, q);
				if (on_block(pt, q, &b))
					return q->err;
			} else if (b.ninsn) {
				/*
				 * The decoder stopped inside the block: its last instruction
				 * needed trace that is not there. None of its instructions
				 * is proven (see ptq.unproven).
				 */
				if (resolve_pending(pt, q, b.ip))
					return q->err;
			}
		}
		if (st == -pte_eos && q->rs_buf) {
			/* a resumed stretch ends at a PSB: the run's decoder goes on from there */
			st = rs_back(pt, q);
			if (st >= 0) {
				q->status = st;
				update_time(pt, q);
				continue;
			}
		}
		if (st < 0) {
			if (st == -pte_eos)
				q->state = Q_NEXT_RUN;
			else if (on_error(pt, q, st))
				return q->err;
			continue;
		}
		q->status = st;
	}
	return q->err;
}
