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
 * Cycles are counted from a reference CYC: the first one after a PSB or an
 * overflow counts from a CYC before them, which is not used, so it is dated
 * by the clock as it stands (a lower bound: the last TSC or MTC) and the
 * count starts there. Later packets correct the count: a TSC or MTC that comes after a CYC cannot be earlier than it, so
 * a cycle time beyond it is pulled back to it (the clock with it: the only
 * time it goes back), and a cycle time behind the
 * clock (cycles that did not count: the core halted, or tracing was off)
 * restarts the count at the clock. Nothing before a PSB is used, so a clock
 * started at any PSB agrees with one that ran from the start.
 *
 * A packet that a decoder consumes (TNT, TIP, FUP, OVF, PTW, power events;
 * not PSB+, MODE, PIP, VMCS, which libipt reads ahead as status) is dated
 * by the clock as it stands when the packet is read: the time of the CYC
 * just before it when there is one.
 */
#include "config.h"
#include <intel-pt.h>
#include <string.h>
#include "pt_clock.h"

#define TSC_SLIP 0x10000

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
	c->pkt = pt_pkt_alloc_decoder(&pc);
	if (!c->pkt)
		return -1;
	int st = start ? pt_pkt_sync_set(c->pkt, start) : pt_pkt_sync_forward(c->pkt);
	if (st < 0 || pt_pkt_get_offset(c->pkt, &c->next_off) < 0)
		c->dead = 1;
	return 0;
}

void ptclock_fini(struct ptclock *c)
{
	if (c->pkt)
		pt_pkt_free_decoder(c->pkt);
	c->pkt = NULL;
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
 * to @t (the one place it may), and counting goes on from there.
 */
static void bound_cycles(struct ptclock *c, uint64_t t)
{
	if (!c->have_cyc_ref || c->cyc_base + (uint64_t)c->cyc_ticks <= t)
		return;
	c->cyc_base = t;
	c->cyc_ticks = 0;
	c->now = t;
}

static void on_tsc(struct ptclock *c, uint64_t payload)
{
	uint64_t t = payload;
	if (c->have_time) {
		t |= c->now & (0xffull << 56);
		if (t < c->now && c->now - t < TSC_SLIP)
			t = c->now;
		else if (t < c->now)
			t += 1ull << 56;
	}
	c->tsc_pkt = t;
	c->have_tma = 0;
	set_now(c, t);
	bound_cycles(c, t);
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
}

static void on_mtc(struct ptclock *c, uint8_t mtc)
{
	if (!c->have_tma)
		return;
	uint32_t d = mtc > c->last_mtc ? mtc - c->last_mtc : mtc + 256u - c->last_mtc;
	c->ctc_delta += (uint64_t)d << c->cfg.mtc_shift;
	c->last_mtc = mtc;
	uint64_t t = c->ctc_base + multdiv(c->ctc_delta, c->cfg.tsc_ctc_n, c->cfg.tsc_ctc_d);
	set_now(c, t);
	bound_cycles(c, t);
}

static void on_cyc(struct ptclock *c, uint64_t cycles)
{
	if (c->cyc_ratio <= 0 || !c->have_time)
		return;
	if (!c->have_cyc_ref) {    /* counts from a CYC we did not see: this one is now, at least */
		c->have_cyc_ref = 1;
		c->cyc_base = c->now;
		c->cyc_ticks = 0;
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

static void on_packet(struct ptclock *c, const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_pad:
	case ppt_mode:             /* status: libipt reads these (and PSB+) ahead of what it returns */
	case ppt_pip:
	case ppt_vmcs:
	case ppt_mnt:
		return;
	case ppt_tsc:
		on_tsc(c, p->payload.tsc.tsc);
		return;
	case ppt_tma:
		on_tma(c, p->payload.tma.ctc, p->payload.tma.fc);
		return;
	case ppt_mtc:
		on_mtc(c, p->payload.mtc.ctc);
		return;
	case ppt_cyc:
		on_cyc(c, p->payload.cyc.value);
		return;
	case ppt_cbr:
		if (p->payload.cbr.ratio && c->cfg.max_nonturbo)
			c->cyc_ratio = (double)c->cfg.max_nonturbo / p->payload.cbr.ratio;
		return;
	case ppt_psb:
		c->in_psb = 1;
		/* fall through */
	case ppt_ovf:              /* packets (CYCs among them) may be lost: a new cycle reference */
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
		c->point_time = c->now;
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
		struct pt_packet p;
		int st = pt_pkt_next(c->pkt, &p, sizeof(p));
		if (st == -pte_eos) {
			c->dead = 1;
			break;
		}
		if (st < 0) {
			resync(c);
			continue;
		}
		on_packet(c, &p);
		if (pt_pkt_get_offset(c->pkt, &c->next_off) < 0)
			c->dead = 1;
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
