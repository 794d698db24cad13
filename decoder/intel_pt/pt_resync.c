/*
 * pt_resync.c - going on after missing code, within the second part of the
 * Intel PT decoder (intel_pt.c has the overview): where libipt stops for
 * want of memory (no image: the kernel without kcore, a library not found),
 * decoding resumes at the next address the trace itself gives, as perf's
 * decoder does (intel_pt_sync_ip), not at the next PSB as libipt would.
 *
 * The packets from the PSB before the stop are walked again (libipt's
 * packet decoder) to know the execution mode and the timing packets; after
 * the packet perf's failed walk took (find_resume), the first TIP, TIP.PGE,
 * TIP.PGD or FUP with an address that does not build on the last IP
 * (sign-extended 48 bits, or all 64: perf forgets the last IP at such a
 * stop), or an overflow, is where decoding resumes. A PSB before it, or the
 * end of the run, and the next PSB is the resume point as before.
 *
 * libipt starts only at a PSB, so the resumed stretch is a copy of the trace
 * from that packet to the next PSB behind a made-up PSB+: the timing packets
 * seen since the PSB before (TSC, TMA, CBR, then the MTCs after them, so
 * libipt's time goes on as it would have), the execution mode, and the
 * resume address: a FUP in the PSB+ (tracing stands there after a TIP or
 * FUP: perf takes either as just an address, so a FUP's partner TIP is then
 * the next branch's target, not an interrupt's), a TIP.PGE after it
 * (tracing starts there; after a TIP.PGD, the one that follows it), or
 * nothing (an overflow: the copy starts with it and libipt takes it). The run's decoder waits
 * meanwhile and takes over at that PSB; decoder offsets in the stretch map
 * back to the run's (q_pos), so the packet clock, gaps, PSB events and
 * spool release see the trace as it is. What happened there goes out as
 * perf shows it: the loss, a gap sized in trace bytes from the stop to the
 * resume point, then a branch from 0 to the resume address ("tr strt").
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pt_internal.h"

#define MTC_MAX 4096                 /* MTC packets carried into a stretch (the latest ones) */

/* Offset of the last PSB that starts before @pos in @p (@pos if none). */
static uint64_t prev_psb(const uint8_t *p, uint64_t n, uint64_t pos)
{
	uint64_t best = pos;
	/* PSBs are found forward (a packet may end in 02 82): step back until one is */
	for (uint64_t from = pos; best == pos;) {
		uint64_t lo = from > (UINT64_C(4) << 10) ? from - (UINT64_C(4) << 10) : 0;
		for (uint64_t i = next_psb(p, n, lo); i < from && i < pos; i = next_psb(p, n, i + PSB_LEN))
			best = i;
		if (!lo)
			break;
		from = lo + PSB_LEN;
	}
	return best;
}

struct timing {                   /* what dates the trace at a point: the packets to repeat */
	uint8_t mode;                    /* MODE.Exec bits (CS.L, CS.D) */
	uint8_t tsc[8], tma[7], cbr[4];
	int have_tsc, have_tma, have_cbr;
	uint16_t *mtc;                   /* the MTC packets after the last TSC, oldest first (MTC_MAX) */
	size_t nmtc;
};

struct resume {
	uint64_t pos;                    /* run offset of the packet decoding resumes at */
	uint64_t copy_from;              /* run offset the stretch's copy of the trace starts at */
	uint64_t end;                    /* run offset of the next PSB (or the run's size) */
	uint64_t ip;
	enum pt_packet_type type;        /* ppt_tip, ppt_fup, ppt_tip_pge, ppt_tip_pgd or ppt_ovf */
	uint64_t pge_ip;                 /* after a TIP.PGD: the TIP.PGE the stretch starts with (0: none) */
	struct timing t;                 /* as of that packet */
};

static void timing_packet(struct timing *t, const struct pt_packet *k, const uint8_t *raw)
{
	switch (k->type) {
	case ppt_mode:
		if (k->payload.mode.leaf == pt_mol_exec)
			t->mode = (uint8_t)((k->payload.mode.bits.exec.csl ? 1 : 0) | (k->payload.mode.bits.exec.csd ? 2 : 0));
		break;
	case ppt_tsc:
		if (k->size == sizeof(t->tsc)) {
			memcpy(t->tsc, raw, sizeof(t->tsc));
			t->have_tsc = 1;
			t->have_tma = 0;
			t->nmtc = 0;
		}
		break;
	case ppt_tma:
		if (k->size == sizeof(t->tma)) {
			memcpy(t->tma, raw, sizeof(t->tma));
			t->have_tma = t->have_tsc;
		}
		break;
	case ppt_cbr:
		if (k->size == sizeof(t->cbr)) {
			memcpy(t->cbr, raw, sizeof(t->cbr));
			t->have_cbr = 1;
		}
		break;
	case ppt_mtc:
		if (t->nmtc == MTC_MAX) {
			memmove(t->mtc, t->mtc + 1, (MTC_MAX - 1) * sizeof(*t->mtc));
			t->nmtc--;
		}
		t->mtc[t->nmtc++] = (uint16_t)(0x59 | raw[1] << 8);
		break;
	default:
		break;
	}
}

static void set_candidate(struct resume *r, const struct timing *live, uint64_t pos, uint64_t ip,
			  enum pt_packet_type type, uint64_t copy_from)
{
	r->pos = pos;
	r->ip = ip;
	r->type = type;
	r->copy_from = copy_from;
	uint16_t *m = r->t.mtc;
	r->t = *live;
	r->t.mtc = m;
	memcpy(m, live->mtc, live->nmtc * sizeof(*m));
}

/*
 * perf resumes at a TIP.PGD with an address too (tracing ended there); the
 * stretch starts at the TIP.PGE after it, made whole (it may build on the
 * TIP.PGD's address, which the made-up PSB+ cannot give libipt), with the
 * timing as of there. None before the next PSB: the stretch is empty.
 */
static void pge_after_pgd(struct pt_packet_decoder *d, const uint8_t *p, uint64_t size, struct resume *r)
{
	uint64_t last_ip = r->ip, off = r->copy_from;
	struct pt_packet k;
	r->pge_ip = 0;
	if (pt_pkt_sync_set(d, off) < 0)
		goto none;
	while (pt_pkt_get_offset(d, &off) >= 0 && pt_pkt_next(d, &k, sizeof(k)) >= 0) {
		switch (k.type) {
		case ppt_psb: case ppt_ovf:
			goto none;
		case ppt_tip: case ppt_tip_pgd: case ppt_fup:
			last_ip = ip_update(last_ip, &k.payload.ip);
			break;
		case ppt_tip_pge:
			last_ip = ip_update(last_ip, &k.payload.ip);
			if (k.payload.ip.ipc == pt_ipc_suppressed)
				goto none;
			r->pge_ip = last_ip;
			r->copy_from = off + (uint64_t)k.size;
			return;
		default:
			timing_packet(&r->t, &k, p + off);
			break;
		}
	}
none:
	r->copy_from = next_psb(p, size, r->copy_from);
}

/*
 * Where decoding resumes after it stopped at run offset @stop, at @miss_ip:
 * 1 with @r filled (r->t.mtc to free), 0 if not before the next PSB (or
 * overflow, or the run's end), -1 on failure (no memory).
 *
 * perf's walk from an address without code fails on the next packet that
 * needs one (a TNT, TIP, TIP.PGD or FUP), which it has taken by then: the
 * search starts after that one. It is the first such packet after B, the
 * last packet before the stop that led to @miss_ip (libipt may have taken
 * it, an event it went to, or not yet, a branch); without B (a TNT bit led
 * there), the first one from the stop on.
 */
static int find_resume(const struct ptq *q, uint64_t stop, uint64_t miss_ip, struct resume *r)
{
	const struct run *run = &q->runs[q->cur_run - 1];
	const uint8_t *p = q->buf + run->buf_off;
	uint64_t from = prev_psb(p, run->size, stop);
	if (from >= stop)
		return 0;
	struct pt_config c;
	pt_config_init(&c);
	c.begin = (uint8_t *)p;
	c.end = (uint8_t *)p + run->size;
	memset(r, 0, sizeof(*r));
	struct timing live = { .mode = 1 };      /* 64-bit until a MODE.Exec says otherwise */
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
	live.mtc = malloc(MTC_MAX * sizeof(*live.mtc));
	r->t.mtc = malloc(MTC_MAX * sizeof(*r->t.mtc));
	int rc = d && live.mtc && r->t.mtc ? 0 : -1;
	if (rc || pt_pkt_sync_set(d, from) < 0)
		goto out;
	int consumed = 0, have_b = 0, cand = 0;
	uint64_t last_ip = 0, off = from;
	struct pt_packet k;
	while (pt_pkt_get_offset(d, &off) >= 0 && pt_pkt_next(d, &k, sizeof(k)) >= 0) {
		if (cand && off >= stop)
			break;                  /* no B after it before the stop: the candidate stands */
		if (k.type == ppt_psb && off >= stop)
			break;                  /* the next sync point: decoding resumes there as before */
		int at_ip = 0, sets_ip = 0;
		int branch = k.type == ppt_tnt_8 || k.type == ppt_tnt_64 || k.type == ppt_tip || k.type == ppt_tip_pgd ||
			     k.type == ppt_fup;
		switch (k.type) {
		case ppt_psb:
			last_ip = 0;
			cand = 0;
			break;
		case ppt_ovf:
			last_ip = 0;
			cand = 0;
			/* perf takes an overflow as it comes, walking or not: libipt takes it over from there */
			if ((have_b || off >= stop) && off >= q->rs_floor) {
				set_candidate(r, &live, off, 0, k.type, off);
				cand = 1;
				if (off >= stop)
					goto out_found;
			}
			continue;
		case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_fup:
			last_ip = ip_update(last_ip, &k.payload.ip);
			sets_ip = k.type != ppt_tip_pgd && k.payload.ip.ipc != pt_ipc_suppressed;
			/* as perf: the last IP is not trusted after the stop, so an address that does not build on it */
			at_ip = k.payload.ip.ipc == pt_ipc_sext_48 || k.payload.ip.ipc == pt_ipc_full;
			break;
		default:
			timing_packet(&live, &k, p + off);
			break;
		}
		if (sets_ip && off < stop && last_ip == miss_ip) {
			have_b = 1;             /* a later B: what was found after an earlier one does not count */
			consumed = 0;
			cand = 0;
			continue;
		}
		if (branch && !consumed && (have_b || off >= stop)) {
			consumed = 1;
			continue;
		}
		if (at_ip && consumed && !cand && off >= q->rs_floor && last_ip) {
			/* as perf: tracing stands at its address, the packet taken (a FUP's partner is not bound) */
			set_candidate(r, &live, off, last_ip, k.type, off + (uint64_t)k.size);
			cand = 1;
			if (off >= stop)
				break;
		}
	}
out_found:
	if (cand && (off >= stop || r->pos >= stop)) {
		if (r->type == ppt_tip_pgd)
			pge_after_pgd(d, p, run->size, r);
		r->end = next_psb(p, run->size, r->copy_from);
		rc = 1;
	}
out:
	if (d)
		pt_pkt_free_decoder(d);
	free(live.mtc);
	if (rc != 1) {
		free(r->t.mtc);
		r->t.mtc = NULL;
	}
	return rc;
}

static size_t put_ip(uint8_t *b, uint8_t opcode, uint64_t ip)
{
	b[0] = (uint8_t)(opcode | 6 << 5);   /* IPBytes 110b: the full address */
	for (int i = 0; i < 8; i++)
		b[1 + i] = (uint8_t)(ip >> (8 * i));
	return 9;
}

/* The stretch's bytes: the made-up start, then the trace from r->copy_from to r->end. */
static uint8_t *make_stretch(const struct ptq *q, const struct resume *r, uint64_t *len, uint64_t *prefix)
{
	const struct run *run = &q->runs[q->cur_run - 1];
	uint64_t copy = r->end - r->copy_from;
	uint8_t *b = malloc(64 + 2 * r->t.nmtc + copy);
	if (!b)
		return NULL;
	size_t n = 0;
	for (int i = 0; i < PSB_LEN; i += 2) {
		b[n++] = 0x02;
		b[n++] = 0x82;
	}
	if (r->t.have_tsc) {
		memcpy(b + n, r->t.tsc, sizeof(r->t.tsc));
		n += sizeof(r->t.tsc);
	}
	if (r->t.have_tma) {
		memcpy(b + n, r->t.tma, sizeof(r->t.tma));
		n += sizeof(r->t.tma);
	}
	if (r->t.have_cbr) {
		memcpy(b + n, r->t.cbr, sizeof(r->t.cbr));
		n += sizeof(r->t.cbr);
	}
	int enabled = r->type == ppt_tip || r->type == ppt_fup;
	if (enabled) {
		b[n++] = 0x99;                   /* MODE.Exec */
		b[n++] = r->t.mode;
		n += put_ip(b + n, 0x1d, r->ip); /* FUP */
	}
	b[n++] = 0x02;                           /* PSBEND */
	b[n++] = 0x23;
	for (size_t i = 0; i < r->t.nmtc; i++) {
		b[n++] = (uint8_t)r->t.mtc[i];
		b[n++] = (uint8_t)(r->t.mtc[i] >> 8);
	}
	if (r->type == ppt_tip_pge || (r->type == ppt_tip_pgd && r->pge_ip)) {
		b[n++] = 0x99;
		b[n++] = r->t.mode;
		n += put_ip(b + n, 0x11, r->type == ppt_tip_pge ? r->ip : r->pge_ip);   /* TIP.PGE */
	}
	*prefix = n;
	memcpy(b + n, q->buf + run->buf_off + r->copy_from, copy);
	*len = n + copy;
	return b;
}

/* The stretch is over: the run's decoder again, where it waited (no PSB synchronized yet). */
void rs_leave(const struct rb_pt *pt, struct ptq *q)
{
	if (!q->rs_buf)
		return;
	if (q->dec)
		dec_free(pt, q->dec);
	q->dec = q->rs_main;
	q->dec_base = q->rs_main_base;
	q->dec_skip = 0;
	q->rs_main = NULL;
	free(q->rs_buf);
	q->rs_buf = NULL;
	if (q->dec)
		dec_set_image(pt, q->dec, q->img ? q->img->img : NULL);
}

/*
 * The stretch's data ended: the run's decoder takes over at the PSB it
 * ended at. Returns libipt's status there, or -pte_eos at the run's end.
 */
int rs_back(const struct rb_pt *pt, struct ptq *q)
{
	uint64_t end = q->rs_end;
	rs_leave(pt, q);
	if (end >= q->runs[q->cur_run - 1].size)
		return -pte_eos;
	return dec_sync_set(pt, q->dec, end - q->dec_base);
}

/*
 * Decoding stopped at run offset @stop for want of memory: resume at the
 * next address the trace gives. Returns 1 with the stretch's decoder
 * synchronized (its status in q->status, the resume address in *@ip, its
 * run offset in *@pos, in *@flags those of the branch from 0 to it that
 * perf shows, or 0 where libipt's own event makes it: a TIP.PGE, an
 * overflow), 0 if there is none before the next PSB, or a negative errno.
 */
int rs_resume(struct rb_pt *pt, struct ptq *q, uint64_t stop, uint64_t *ip, uint64_t *pos, uint32_t *flags)
{
	struct resume r;
	int f = find_resume(q, stop, q->miss_ip, &r);
	if (f <= 0)
		return f < 0 ? -ENOMEM : 0;
	uint64_t len, prefix;
	uint8_t *b = make_stretch(q, &r, &len, &prefix);
	free(r.t.mtc);
	if (!b)
		return -ENOMEM;
	struct pt_config c;
	run_config(pt, q, &q->runs[q->cur_run - 1], 0, &c);
	c.begin = b;
	c.end = b + len;
	void *d = dec_alloc(pt, &c);
	if (!d) {
		free(b);
		return -ENOMEM;
	}
	if (q->img)
		dec_set_image(pt, d, q->img->img);
	int st = dec_sync_set(pt, d, 0);
	if (st < 0) {                    /* not expected: the made-up PSB+ is well formed */
		dec_free(pt, d);
		free(b);
		return 0;
	}
	if (q->rs_buf) {                 /* a stretch ends in another: the run's decoder still waits */
		dec_free(pt, q->dec);
		free(q->rs_buf);
	} else {
		q->rs_main = q->dec;
		q->rs_main_base = q->dec_base;
	}
	q->dec = d;
	q->rs_buf = b;
	q->rs_end = r.end;
	q->dec_skip = prefix;
	q->dec_base = r.copy_from - prefix;      /* modulo 2^64: offsets below dec_skip read as copy_from */
	q->rs_floor = r.pos + 1;
	q->status = st;
	*ip = r.ip;
	*pos = r.pos;
	/* perf's branch from 0 there: a trace begin, or at a TIP.PGD with its address also its end */
	*flags = r.type == ppt_tip || r.type == ppt_fup ? RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN
		 : r.type == ppt_tip_pgd ? RB_IP_FLAG_BRANCH | RB_IP_FLAG_TRACE_BEGIN | RB_IP_FLAG_TRACE_END : 0;
	return 1;
}
