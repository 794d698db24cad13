/*
 * test_ptclock.c - decoder/intel_pt/pt_clock.c on packet streams written with
 * libipt's encoder: TSC and TMA set the clock, MTC advances it, CYC counts
 * on from a reference, consumed packets take the time the packets before
 * them give, and a clock started at a later PSB answers as one that ran
 * from the start. Configuration as the synthesized fixtures': TSC/CTC 100,
 * an MTC every 2^3 CTC ticks, max non-turbo ratio 24 with CBR 24 (one TSC
 * tick per cycle).
 */
#include "config.h"
#include <intel-pt.h>
#include <string.h>
#include "decoder/intel_pt/pt_clock.h"
#include "tap.h"

#define CTC 100u
#define SHIFT 3u

struct stream {
	uint8_t buf[4096];
	struct pt_encoder *enc;
};

static const struct ptclock_config cfg = { .tsc_ctc_n = CTC, .tsc_ctc_d = 1, .mtc_shift = SHIFT, .max_nonturbo = 24 };

static int st_open(struct stream *s)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = s->buf;
	c.end = s->buf + sizeof(s->buf);
	s->enc = pt_alloc_encoder(&c);
	return s->enc ? 0 : -1;
}

/* Writes one packet; returns the offset it starts at. */
static uint64_t put(struct stream *s, struct pt_packet *p)
{
	uint64_t off = 0;
	pt_enc_get_offset(s->enc, &off);
	if (pt_enc_next(s->enc, p) < 0)
		diag("cannot encode packet type %d", p->type);
	return off;
}

static uint64_t put_simple(struct stream *s, enum pt_packet_type type)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = type;
	return put(s, &p);
}

/* PSB+ at TSC @tsc: PSB, TSC, TMA, CBR 24, PSBEND. Returns the PSB's offset. */
static uint64_t psb(struct stream *s, uint64_t tsc)
{
	struct pt_packet p;
	uint64_t at = put_simple(s, ppt_psb);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = tsc;
	put(s, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tma;
	p.payload.tma.ctc = (uint16_t)(tsc / CTC);
	p.payload.tma.fc = (uint16_t)(tsc % CTC);
	put(s, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_cbr;
	p.payload.cbr.ratio = 24;
	put(s, &p);
	put_simple(s, ppt_psbend);
	return at;
}

static void cyc(struct stream *s, uint64_t cycles)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = cycles;
	put(s, &p);
}

/* An MTC for crystal time @ctc (a multiple of 2^SHIFT). */
static void mtc(struct stream *s, uint64_t ctc)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_mtc;
	p.payload.mtc.ctc = (uint8_t)(ctc >> SHIFT);
	put(s, &p);
}

/* A one-bit TNT; returns the offset after it (where a decoder stands once it is consumed). */
static uint64_t tnt(struct stream *s)
{
	struct pt_packet p;
	uint64_t off = 0;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = 1;
	p.payload.tnt.payload = 1;
	put(s, &p);
	pt_enc_get_offset(s->enc, &off);
	return off;
}

static uint64_t at(struct ptclock *c, uint64_t off)
{
	uint64_t t = 0;
	return ptclock_at(c, off, &t) < 0 ? 0 : t;
}

int main(void)
{
	struct stream s;
	struct ptclock c, late;
	uint64_t end = 0;
	if (st_open(&s)) {
		ok(0, "libipt's encoder");
		return done_testing();
	}
	const uint64_t t0 = 1000000;          /* a multiple of the MTC period (800) */
	psb(&s, t0);
	/* the first CYC counts from a CYC before the PSB: dated at the PSB's TSC */
	cyc(&s, 10);
	uint64_t a = tnt(&s);
	cyc(&s, 7);
	uint64_t b = tnt(&s);
	/*
	 * an MTC at t0 + 800, then a CYC 797 cycles after the first: that
	 * one came at t0 + 800 or later, so the first at t0 + 3 or later
	 */
	mtc(&s, t0 / CTC + 8);
	cyc(&s, 790);
	uint64_t d = tnt(&s);
	cyc(&s, 5);
	uint64_t e = tnt(&s);
	/* a count that runs past the next PSB's TSC (as a wrong ratio would) */
	cyc(&s, 2000);
	tnt(&s);
	/* a second PSB: what follows must not depend on what came before */
	uint64_t t1 = t0 + 1600;
	uint64_t p2 = psb(&s, t1);
	cyc(&s, 3);
	uint64_t f = tnt(&s);
	cyc(&s, 4);
	uint64_t g = tnt(&s);
	cyc(&s, 900);
	uint64_t h = tnt(&s);
	mtc(&s, t1 / CTC + 8);                /* t1 + 800, before the count (t1 + 904): it wins */
	uint64_t i = tnt(&s);
	cyc(&s, 150);
	uint64_t j = tnt(&s);
	pt_enc_get_offset(s.enc, &end);

	if (ptclock_init(&c, &cfg, s.buf, s.buf + end, 0)) {
		ok(0, "ptclock_init");
		return done_testing();
	}
	uint64_t ta = at(&c, a), tb = at(&c, b), td = at(&c, d), te = at(&c, e);
	ok(ta == t0 + 3, "the first CYC after a PSB gets the lowest time the packets allow (t0 + %llu)",
	   (unsigned long long)(ta - t0));
	ok(tb == ta + 7, "a CYC counts on from the one before it (+%llu)", (unsigned long long)(tb - ta));
	ok(td == t0 + 800, "a CYC after an MTC is not dated before it (t0 + %llu)", (unsigned long long)(td - t0));
	ok(te == td + 5, "counting goes on from there (+%llu)", (unsigned long long)(te - td));
	uint64_t tf = at(&c, f), tg = at(&c, g), th = at(&c, h), ti = at(&c, i);
	ok(tf == t1, "after the second PSB, its TSC (t1 + %llu)", (unsigned long long)(tf - t1));
	ok(tg == tf + 4 && th == tg + 900, "and the cycles after it (+%llu, +%llu)", (unsigned long long)(tg - tf),
	   (unsigned long long)(th - tg));
	uint64_t tj = at(&c, j);
	ok(ti == th && tj == t1 + 950, "an MTC that comes before the cycle count restarts it there (t1 + %llu), "
	   "and no packet is dated before the one before it (t1 + %llu)", (unsigned long long)(tj - t1),
	   (unsigned long long)(ti - t1));
	ptclock_fini(&c);

	/* the same stream, the clock started at the second PSB */
	ptclock_init(&c, &cfg, s.buf, s.buf + end, 0);
	ptclock_init(&late, &cfg, s.buf, s.buf + end, p2);
	int same = 1;
	for (uint64_t off = p2 + 1; off <= end; off++) {
		uint64_t x = 0, y = 0;
		int rx = ptclock_at(&c, off, &x), ry = ptclock_at(&late, off, &y);
		if (off > f - 1 && (rx != ry || x != y)) {
			diag("offset %llu: %llu from the start, %llu from the PSB", (unsigned long long)off,
			     (unsigned long long)x, (unsigned long long)y);
			same = 0;
			break;
		}
	}
	ok(same, "a clock started at a PSB gives the times of one that ran from the start");
	ptclock_fini(&c);
	ptclock_fini(&late);

	/*
	 * every kind of packet, in every size the formats allow: the packets the
	 * clock reads from the bytes itself must be read as libipt reads them (the
	 * same boundaries, so the same times at every offset)
	 */
	struct stream z;
	if (st_open(&z)) {
		ok(0, "libipt's encoder");
		return done_testing();
	}
	uint64_t zend = 0;
	psb(&z, t0);
	static const enum pt_ip_compression ipcs[] = { pt_ipc_suppressed, pt_ipc_update_16, pt_ipc_update_32,
						       pt_ipc_update_48, pt_ipc_sext_48, pt_ipc_full };
	static const enum pt_packet_type ipt[] = { ppt_tip, ppt_tip_pge, ppt_tip_pgd, ppt_fup };
	for (unsigned k = 0; k < 24; k++) {
		struct pt_packet p;
		memset(&p, 0, sizeof(p));
		p.type = ipt[k % 4];
		p.payload.ip.ipc = ipcs[k % 6];
		p.payload.ip.ip = 0x7f0000401000ull + k * 0x123;
		put(&z, &p);
		cyc(&z, 1 + (1ull << (k % 20)) * 3);        /* one to four bytes */
		tnt(&z);
		memset(&p, 0, sizeof(p));
		p.type = ppt_tnt_64;
		p.payload.tnt.bit_size = 40 + k % 7;
		p.payload.tnt.payload = 0x5a5a5a5a5aull;
		put(&z, &p);
		mtc(&z, t0 / CTC + 8 * (k + 1));
		put_simple(&z, ppt_pad);
		memset(&p, 0, sizeof(p));
		p.type = ppt_mode;
		p.payload.mode.leaf = pt_mol_exec;
		p.payload.mode.bits.exec.csl = 1;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_pip;
		p.payload.pip.cr3 = 0x1000 * k;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_cbr;
		p.payload.cbr.ratio = (uint8_t)(20 + k);
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_ptw;
		p.payload.ptw.plc = k & 1;
		p.payload.ptw.payload = k;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_mwait;
		p.payload.mwait.hints = k;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_pwre;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_pwrx;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_exstop;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_vmcs;
		p.payload.vmcs.base = 0x1000;
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_mnt;
		put(&z, &p);
		put_simple(&z, ppt_stop);
		memset(&p, 0, sizeof(p));
		p.type = ppt_tsc;
		p.payload.tsc.tsc = t0 + 900 * (k + 1);
		put(&z, &p);
		memset(&p, 0, sizeof(p));
		p.type = ppt_tma;
		p.payload.tma.ctc = (uint16_t)(k * 77);
		p.payload.tma.fc = (uint16_t)(k * 21 % 512);
		put(&z, &p);
		if (k % 8 == 7)
			put_simple(&z, ppt_ovf);
		if (k % 6 == 5)
			psb(&z, t0 + 900 * (k + 1) + 10);
	}
	pt_enc_get_offset(z.enc, &zend);
	struct ptclock fast, slow;
	ptclock_init(&fast, &cfg, z.buf, z.buf + zend, 0);
	ptclock_init(&slow, &cfg, z.buf, z.buf + zend, 0);
	slow.slow = 1;
	int agree = 1;
	for (uint64_t off = 1; off <= zend && agree; off++) {
		uint64_t x = 0, y = 0;
		int rx = ptclock_at(&fast, off, &x), ry = ptclock_at(&slow, off, &y);
		if (rx != ry || x != y || fast.next_off != slow.next_off) {
			diag("offset %llu: %d %llu (next %llu) read from the bytes, %d %llu (next %llu) by libipt",
			     (unsigned long long)off, rx, (unsigned long long)x, (unsigned long long)fast.next_off, ry,
			     (unsigned long long)y, (unsigned long long)slow.next_off);
			agree = 0;
		}
	}
	ok(agree && !fast.dead && fast.next_off == zend, "%llu bytes of every packet kind: read from the bytes, as "
	   "libipt reads them (every offset, the same time)", (unsigned long long)zend);
	ptclock_fini(&fast);
	ptclock_fini(&slow);
	pt_free_encoder(z.enc);

	/* nothing to read: no time */
	uint64_t t = 7;
	ptclock_init(&c, &cfg, s.buf, s.buf + 1, 0);
	ok(ptclock_at(&c, 1, &t) < 0 && t == 7, "no PSB: no time");
	ptclock_fini(&c);
	pt_free_encoder(s.enc);
	return done_testing();
}
