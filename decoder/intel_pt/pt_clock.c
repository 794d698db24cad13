/*
 * pt_clock.c - see pt_clock.h. The rules, from the SDM's timing packets
 * and Linux perf's decoder (facts only):
 *
 *   TSC   the time, 56 bits: the top byte comes from the time so far; a
 *         value a little behind it (< 0x10000 ticks, "TSC slip") does not
 *         move the clock back, a larger one means the low bits wrapped
 *   TMA   ties the crystal clock (CTC) to the preceding TSC: the TSC time of
 *         the CTC count the next MTC counts from
 *   MTC   8 bits of CTC at bit mtc_shift: time = that base + CTC ticks
 *         since it * tsc_ctc_n / tsc_ctc_d
 *   CBR   core:bus ratio; one core cycle is max_nonturbo / CBR TSC ticks
 *   CYC   core cycles since the previous CYC packet
 *
 * Cycles are counted on from a reference CYC, whose time must be found
 * first: the first CYC after a PSB or an overflow (or at the start) counts
 * from a CYC that was not read. It is not before the clock (the last TSC
 * or MTC), nor before a TSC or MTC after it minus the cycles counted up to
 * the first CYC after that (read ahead: ahead(), up to the next PSB, OVF or
 * TIP.PGD, for AHEAD_TIMING timing packets); it gets the larger of these
 * lower bounds, as perf dates it at its last timing packet. (An upper
 * bound exists, the PSB's TSC plus its cycles, as the CYC it counts from
 * came before that TSC: exact when a CYC came just before the PSB, far off
 * when tracing was off in between, as the counter runs on meanwhile. With
 * the middle of the bounds a count could run ahead of the truth, and a
 * later PSB's TSC would move the clock back; from the lower bound it never
 * runs ahead, so times never go back, and on the fixtures the errors are
 * no larger.)
 *
 * Should a later TSC or MTC still come before the count (a wrong cycle
 * ratio), the count restarts there (the clock goes back to it, but the
 * packets it dates do not go back before those of the same PSB period); a
 * count behind the clock (cycles that did not count: the core halted, or
 * the reference was dated early) restarts at the clock. Nothing before a
 * PSB is used, so a clock started at any PSB agrees with one that ran from
 * the start.
 *
 * A packet that a decoder consumes (TNT, TIP, FUP, OVF, PTW, power events;
 * not PSB+, MODE, PIP, VMCS, which libipt reads ahead as status) is dated
 * by the clock as it stands when the packet is read: the time of the CYC
 * just before it when there is one.
 *
 * The clock reads every packet a second time, beside libipt's decoder: the
 * packets that fill a trace (TNT, CYC, TIP / FUP, MTC, TSC, MODE, PAD and
 * the common extended ones) it reads from the bytes itself (next_packet),
 * the rest through libipt's packet decoder (SDM 33.4.2 gives the formats).
 */
#include "config.h"
#include <intel-pt.h>
#include <string.h>
#include "pt_clock.h"

#define TSC_SLIP 0x10000
#define AHEAD_TIMING 2             /* TSC / MTC packets that bound a reference CYC */
#define AHEAD_PACKETS 4096

static uint64_t multdiv(uint64_t t, uint32_t n, uint32_t d)
{
	if (!d)
		return 0;
	return (t / d) * n + ((t % d) * n) / d;
}

int ptclock_init(struct ptclock *c, const struct ptclock_config *cfg, const uint8_t *begin, const uint8_t *end,
		 uint64_t start)
{
	struct pt_config pc;
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	if (!c->cfg.tsc_ctc_n)
		c->cfg.tsc_ctc_d = 0;
	pt_config_init(&pc);
	pc.begin = (uint8_t *)begin;
	pc.end = (uint8_t *)end;
	c->begin = begin;
	c->end = end;
	c->pkt = pt_pkt_alloc_decoder(&pc);
	c->ahead = pt_pkt_alloc_decoder(&pc);
	if (!c->pkt || !c->ahead) {
		ptclock_fini(c);
		return -1;
	}
	int st = start ? pt_pkt_sync_set(c->pkt, start) : pt_pkt_sync_forward(c->pkt);
	if (st < 0 || pt_pkt_get_offset(c->pkt, &c->next_off) < 0)
		c->dead = 1;
	return 0;
}

void ptclock_fini(struct ptclock *c)
{
	if (c->pkt)
		pt_pkt_free_decoder(c->pkt);
	if (c->ahead)
		pt_pkt_free_decoder(c->ahead);
	c->pkt = c->ahead = NULL;
}

static void set_now(struct ptclock *c, uint64_t t)
{
	if (!c->have_time || t > c->now)
		c->now = t;
	c->have_time = 1;
}

/*
 * A TSC or MTC at time @t: the last CYC came before it. A cycle count
 * beyond @t counted cycles from before its reference: the clock goes back
 * to @t, and counting goes on from there.
 */
static void bound_cycles(struct ptclock *c, uint64_t t)
{
	if (!c->have_cyc_ref || c->cyc_base + (uint64_t)c->cyc_ticks <= t)
		return;
	c->cyc_base = t;
	c->cyc_ticks = 0;
	c->now = t;
}

/*
 * The time of TSC packet @payload; the state TMA and MTC refer to. In PSB+
 * (@exact) the TSC is taken as it is, apart from the top byte, so that
 * what follows a PSB does not depend on what came before it.
 */
static uint64_t tsc_time(struct ptclock *c, uint64_t payload, int exact)
{
	uint64_t t = payload;
	if (c->have_time && exact) {
		t |= c->now & (0xffull << 56);
		if (t < c->now && c->now - t > (1ull << 55))
			t += 1ull << 56;
		else if (t > c->now && t - c->now > (1ull << 55) && t >= (1ull << 56))
			t -= 1ull << 56;
	} else if (c->have_time) {
		t |= c->now & (0xffull << 56);
		if (t < c->now && c->now - t < TSC_SLIP)
			t = c->now;
		else if (t < c->now)
			t += 1ull << 56;
	}
	c->tsc_pkt = t;
	c->have_tma = 0;
	return t;
}

static void on_tma(struct ptclock *c, uint16_t ctc, uint16_t fc)
{
	if (!c->cfg.tsc_ctc_d || !c->have_time)
		return;
	uint32_t rem = ctc & ((1u << c->cfg.mtc_shift) - 1);
	c->last_mtc = (ctc >> c->cfg.mtc_shift) & 0xff;
	c->ctc_base = c->tsc_pkt - fc - multdiv(rem, c->cfg.tsc_ctc_n, c->cfg.tsc_ctc_d);
	c->ctc_delta = 0;
	c->have_tma = 1;
	c->mtc_fixup = c->cfg.mtc_shift > 8;
}

/* The time of MTC packet @mtc (0 if there is no TMA to count from). */
static uint64_t mtc_time(struct ptclock *c, uint8_t mtc)
{
	if (!c->have_tma)
		return 0;
	if (c->mtc_fixup) {
		/*
		 * TMA's 16 CTC bits hold only the low 16 - shift bits of an MTC
		 * payload: the rest come from this MTC, the nearest value at or
		 * before it (perf's rule).
		 */
		uint32_t missing = 1u << (16 - c->cfg.mtc_shift);
		c->mtc_fixup = 0;
		c->last_mtc |= mtc & ~(missing - 1) & 0xff;
		if (c->last_mtc >= mtc)
			c->last_mtc = (c->last_mtc - missing) & 0xff;
	}
	uint32_t d = mtc > c->last_mtc ? mtc - c->last_mtc : mtc + 256u - c->last_mtc;
	c->ctc_delta += (uint64_t)d << c->cfg.mtc_shift;
	c->last_mtc = mtc;
	return c->ctc_base + multdiv(c->ctc_delta, c->cfg.tsc_ctc_n, c->cfg.tsc_ctc_d);
}

static void set_ratio(struct ptclock *c, uint8_t cbr)
{
	if (cbr && c->cfg.max_nonturbo)
		c->cyc_ratio = (double)c->cfg.max_nonturbo / cbr;
}

static uint64_t le(const uint8_t *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/*
 * The packet at @off, read from the bytes: its length, and in @p its type
 * and the payload the clock uses; 0 for a packet left to libipt.
 */
static unsigned fast_packet(const struct ptclock *c, uint64_t off, struct pt_packet *p)
{
	static const uint8_t ip_len[8] = { 1, 3, 5, 7, 7, 0, 9, 0 };   /* by IPC; 0: reserved */
	const uint8_t *b = c->begin + off;
	uint64_t left = (uint64_t)(c->end - b);
	if (!left)
		return 0;
	uint8_t h = b[0];
	if (!h) {
		p->type = ppt_pad;
		return 1;
	}
	if (!(h & 1) && h != 0x02) {
		p->type = ppt_tnt_8;
		return 1;
	}
	if ((h & 3) == 3) {                  /* CYC: 5 bits, then 7 per byte while bit 0 says more */
		uint64_t v = h >> 3;
		unsigned n = 1, shift = 5;
		if (h & 4) {
			do {
				if (n >= left || shift > 57)
					return 0;
				v |= (uint64_t)(b[n] >> 1) << shift;
				shift += 7;
			} while (b[n++] & 1);
		}
		p->type = ppt_cyc;
		p->payload.cyc.value = v;
		return n;
	}
	unsigned n;
	switch (h & 0x1f) {
	case 0x0d: p->type = ppt_tip; goto ip;
	case 0x11: p->type = ppt_tip_pge; goto ip;
	case 0x01: p->type = ppt_tip_pgd; goto ip;
	case 0x1d: p->type = ppt_fup;
	ip:
		n = ip_len[h >> 5];
		return n && n <= left ? n : 0;
	}
	switch (h) {
	case 0x59:
		if (left < 2)
			return 0;
		p->type = ppt_mtc;
		p->payload.mtc.ctc = b[1];
		return 2;
	case 0x19:
		if (left < 8)
			return 0;
		p->type = ppt_tsc;
		p->payload.tsc.tsc = le(b + 1, 7);
		return 8;
	case 0x99:
		if (left < 2)
			return 0;
		p->type = ppt_mode;
		return 2;
	case 0x02:
		break;
	default:
		return 0;
	}
	if (left < 2)
		return 0;
	switch (b[1]) {
	case 0xa3:
		p->type = ppt_tnt_64;
		return left >= 8 ? 8 : 0;
	case 0x03:
		if (left < 4)
			return 0;
		p->type = ppt_cbr;
		p->payload.cbr.ratio = b[2];
		return 4;
	case 0x73:
		if (left < 7)
			return 0;
		p->type = ppt_tma;
		p->payload.tma.ctc = (uint16_t)le(b + 2, 2);
		p->payload.tma.fc = (uint16_t)(b[5] | (b[6] & 1) << 8);
		return 7;
	case 0x23:
		p->type = ppt_psbend;
		return 2;
	case 0xf3:
		p->type = ppt_ovf;
		return 2;
	case 0x43:
		p->type = ppt_pip;
		return left >= 8 ? 8 : 0;
	}
	return 0;                           /* PSB (its pattern is checked there) and the rarer ones */
}

/*
 * The lowest time of a reference CYC that the packets after it allow, at
 * least @lo, read on a copy of the clock from offset @off: a TSC or MTC at
 * time T comes before the next CYC, so if that CYC is S ticks of cycles
 * after the reference, the reference is at T - S or later.
 */
static uint64_t ahead(const struct ptclock *c, uint64_t off, uint64_t lo)
{
	struct ptclock k = *c;
	double s = 0;
	int n = 0, open = 0;
	uint64_t t_open = 0;
	if (!c->ahead)
		return lo;
	for (int i = 0; i < AHEAD_PACKETS && (n < AHEAD_TIMING || open); i++) {
		struct pt_packet p;
		uint64_t t = 0;
		unsigned len = c->slow ? 0 : fast_packet(c, off, &p);
		if (len)
			off += len;
		else if (pt_pkt_sync_set(c->ahead, off) < 0 || pt_pkt_next(c->ahead, &p, sizeof(p)) < 0 ||
			 pt_pkt_get_offset(c->ahead, &off) < 0)
			break;
		switch (p.type) {
		case ppt_tsc:
			t = tsc_time(&k, p.payload.tsc.tsc, 0);
			break;
		case ppt_mtc:
			t = mtc_time(&k, p.payload.mtc.ctc);
			break;
		case ppt_tma:
			on_tma(&k, p.payload.tma.ctc, p.payload.tma.fc);
			continue;
		case ppt_cbr:
			set_ratio(&k, p.payload.cbr.ratio);
			continue;
		case ppt_cyc:
			s += (double)p.payload.cyc.value * k.cyc_ratio;
			if (open && t_open > (uint64_t)s && t_open - (uint64_t)s > lo)
				lo = t_open - (uint64_t)s;
			open = 0;
			continue;
		case ppt_psb: case ppt_ovf: case ppt_tip_pgd:
			return lo;
		default:
			continue;
		}
		if (!t)
			continue;
		set_now(&k, t);
		n++;
		open = 1;
		t_open = t;
	}
	return lo;
}

/*
 * The first CYC after a PSB or overflow (of its own cycles, which count
 * from a CYC not read): where counting starts. It is dated at its lower
 * bound, the clock as it stands (the last TSC or MTC), raised to what the
 * packets after it prove.
 */
static void reference_cyc(struct ptclock *c)
{
	uint64_t lo = ahead(c, c->next_off, c->now);   /* from the packet after it */
	set_now(c, lo);
	c->have_cyc_ref = 1;
	c->cyc_base = c->now;
	c->cyc_ticks = 0;
}

static void on_cyc(struct ptclock *c, uint64_t cycles)
{
	if (c->cyc_ratio <= 0 || !c->have_time)
		return;
	if (!c->have_cyc_ref) {
		reference_cyc(c);
		return;
	}
	c->cyc_ticks += (double)cycles * c->cyc_ratio;
	uint64_t t = c->cyc_base + (uint64_t)c->cyc_ticks;
	if (t < c->now) {          /* cycles that did not count: go on from the clock */
		c->cyc_base = c->now;
		c->cyc_ticks = 0;
		return;
	}
	set_now(c, t);
}

static inline void on_packet(struct ptclock *c, const struct pt_packet *p)
{
	uint64_t t;
	switch (p->type) {
	case ppt_pad:
	case ppt_mode:             /* status: libipt reads these (and PSB+) ahead of what it returns */
	case ppt_pip:
	case ppt_vmcs:
	case ppt_mnt:
		return;
	case ppt_tsc:
		t = tsc_time(c, p->payload.tsc.tsc, c->in_psb);
		if (c->in_psb)
			c->now = t;        /* the clock starts again here (see above) */
		set_now(c, t);
		bound_cycles(c, t);
		return;
	case ppt_tma:
		on_tma(c, p->payload.tma.ctc, p->payload.tma.fc);
		return;
	case ppt_mtc:
		if ((t = mtc_time(c, p->payload.mtc.ctc)) != 0) {
			set_now(c, t);
			bound_cycles(c, t);
		}
		return;
	case ppt_cyc:
		on_cyc(c, p->payload.cyc.value);
		return;
	case ppt_cbr:
		set_ratio(c, p->payload.cbr.ratio);
		return;
	case ppt_psb:
		c->in_psb = 1;
		c->floor = 0;
		/* fall through */
	case ppt_ovf:              /* packets (CYCs among them) may have been lost */
		c->have_cyc_ref = 0;
		break;
	case ppt_psbend:
		c->in_psb = 0;
		return;

	default:
		break;
	}
	if (c->have_time && !c->in_psb) {
		c->have_point = 1;
		c->point_time = c->now > c->floor ? c->now : c->floor;
		c->floor = c->point_time;
	}
}

/* After a packet that cannot be read: go on at the next PSB, with no cycle reference. */
static void resync(struct ptclock *c)
{
	c->have_cyc_ref = 0;
	c->in_psb = 0;
	if (pt_pkt_sync_forward(c->pkt) < 0 || pt_pkt_get_offset(c->pkt, &c->next_off) < 0)
		c->dead = 1;
}

int ptclock_at(struct ptclock *c, uint64_t offset, uint64_t *tsc)
{
	while (!c->dead && c->next_off < offset) {
		/* a run of TNT-8 packets (most of a trace) dates as its first one does */
		const uint8_t *b = c->begin + c->next_off, *e = c->begin + offset;
		if (!c->slow && b < e && !(*b & 1) && *b > 2 && c->have_time && !c->in_psb) {
			while (++b < e && !(*b & 1) && *b > 2)
				;
			c->next_off = (uint64_t)(b - c->begin);
			c->pkt_behind = 1;
			c->have_point = 1;          /* as on_packet dates a consumed packet */
			c->point_time = c->now > c->floor ? c->now : c->floor;
			c->floor = c->point_time;
			continue;
		}
		struct pt_packet p;
		unsigned n = c->slow ? 0 : fast_packet(c, c->next_off, &p);
		if (n) {
			c->next_off += n;
			c->pkt_behind = 1;
			on_packet(c, &p);
			continue;
		}
		if (c->pkt_behind && pt_pkt_sync_set(c->pkt, c->next_off) < 0) {
			c->dead = 1;
			break;
		}
		int st = pt_pkt_next(c->pkt, &p, sizeof(p));
		if (st == -pte_eos) {
			c->dead = 1;
			break;
		}
		if (st < 0) {
			resync(c);
			continue;
		}
		if (pt_pkt_get_offset(c->pkt, &c->next_off) < 0)
			c->dead = 1;
		c->pkt_behind = 0;
		on_packet(c, &p);         /* next_off is after it, as for the packets read from the bytes */
	}
	if (c->have_point) {
		*tsc = c->point_time;
		return 0;
	}
	if (c->have_time) {
		*tsc = c->now;
		return 0;
	}
	return -1;
}

int ptclock_agree(const struct ptclock *a, uint64_t abase, const struct ptclock *b, uint64_t bbase)
{
	return a->dead == b->dead && a->next_off + abase == b->next_off + bbase && a->have_time == b->have_time &&
	       a->now == b->now && a->tsc_pkt == b->tsc_pkt && a->have_tma == b->have_tma &&
	       a->ctc_base == b->ctc_base && a->ctc_delta == b->ctc_delta && a->last_mtc == b->last_mtc &&
	       a->mtc_fixup == b->mtc_fixup && a->cyc_ratio == b->cyc_ratio && a->have_cyc_ref == b->have_cyc_ref &&
	       a->cyc_base == b->cyc_base && a->cyc_ticks == b->cyc_ticks && a->in_psb == b->in_psb &&
	       a->have_point == b->have_point && a->point_time == b->point_time && a->floor == b->floor;
}
