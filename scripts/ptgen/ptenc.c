/*
 * ptenc.c - stage 3: the packets an Intel PT processor writes for a known
 * instruction flow, with user-only tracing (CPL 3) or user and kernel
 * tracing, written with libipt's encoder.
 *
 * What is emitted, and when (the choices are in the fixture README):
 *   conditional branch        one TNT bit; TNT-64 when 47 bits are pending,
 *                             partial TNT-8 (<= 6 bits) or TNT-64 when another
 *                             packet forces them out
 *   direct jump / call        nothing (a call pushes its return address)
 *   indirect jump / call      TIP with IP compression against the last IP:
 *                             the smallest form, but every 5th/7th/11th/13th
 *                             IP packet uses update_32/update_48/sext_48/full
 *   near return               a taken TNT bit when its target is the top of
 *                             the 64-entry call stack (return compression),
 *                             else TIP; the stack starts empty at every PSB
 *                             and whenever tracing stops
 *   syscall                   TIP.PGD with the IP suppressed (the target is at
 *                             CPL 0, which is not traced: SDM "IP compression");
 *                             with kernel tracing (cfg->kernel) a TIP to the
 *                             kernel entry, and sysret a TIP back (far
 *                             transfers); the return-compression stack is
 *                             emptied at both, so no return crosses them
 *                             compressed
 *   return to user mode       TSC (+TMA), MODE.Exec 64-bit, TIP.PGE(target)
 *   interrupt                 FUP(interrupted IP), TIP.PGD (suppressed)
 *   overflow                  packets lost, then OVF, FUP(resume IP)
 *   PTWRITE, power events     where a variant puts them (ps_ptw, ps_cbr,
 *                             ps_sleep): PTW (+ FUP of the PTWRITE's IP),
 *                             CBR, MWAIT + PWRE + EXSTOP(IP) + FUP, TSC +
 *                             TMA + PWRX; the CBR of later PSB+ repeats the current
 *                             ratio
 *   IP filtering              (cfg->filt_a..filt_b) a branch into the region:
 *                             TSC (+TMA), MODE.Exec, TIP.PGE(target); a branch
 *                             out of it: TIP.PGD(target), its IP suppressed
 *                             for a direct jump or call with cfg->skl014
 *                             (erratum SKL014); nothing outside the region
 *   PSB+                      every cfg->psb_bytes: PSB, TSC, TMA, CBR,
 *                             MODE.Exec + FUP(current IP) when enabled, PSBEND
 *   time                      one core cycle per instruction, CBR = max
 *                             non-turbo ratio (one TSC tick per cycle); MTC at
 *                             every 2^mtc_period crystal ticks while enabled;
 *                             CYC before each TNT, TIP, TIP.PGD and FUP that
 *                             is not part of PSB+: the cycles since the last
 *                             CYC (the counter runs on through TSC packets and
 *                             while the kernel runs, as perf's decoder models it)
 */
#include "config.h"
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include "ptgen.h"

static void out_bytes(struct ptstream *s, const uint8_t *p, size_t n)
{
	if (s->dropping)
		return;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1 << 16;
		while (cap < s->len + n)
			cap *= 2;
		uint8_t *b = realloc(s->buf, cap);
		if (!b) {
			fprintf(stderr, "ptgen: out of memory\n");
			exit(4);
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void emit(struct ptstream *s, struct pt_packet *p)
{
	struct pt_encoder *enc = s->enc;
	pt_enc_sync_set(enc, 0);
	int n = pt_enc_next(enc, p);
	if (n < 0) {
		fprintf(stderr, "ptgen: libipt cannot encode packet type %d: %s\n", p->type,
			pt_errstr(pt_errcode(n)));
		exit(4);
	}
	out_bytes(s, s->tmp, (size_t)n);
}

static void emit_simple(struct ptstream *s, enum pt_packet_type t)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = t;
	emit(s, &p);
}

/* The smallest IP compression the last IP allows. */
static void emit_ip(struct ptstream *s, enum pt_packet_type t, uint64_t ip, int suppressed)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = t;
	if (suppressed) {
		p.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		uint64_t l = s->last_ip;
		if (l == 0)
			p.payload.ip.ipc = pt_ipc_sext_48;    /* first IP after PSB: not compressed */
		else if ((ip >> 16) == (l >> 16))
			p.payload.ip.ipc = pt_ipc_update_16;
		else if ((ip >> 32) == (l >> 32))
			p.payload.ip.ipc = pt_ipc_update_32;
		else if ((ip >> 48) == (l >> 48))
			p.payload.ip.ipc = pt_ipc_update_48;
		else
			p.payload.ip.ipc = pt_ipc_full;
		/*
		 * A larger compression is always valid; use every form now and
		 * then so that decoders meet all of them.
		 */
		s->nip++;
		if (s->nip % 13 == 0)
			p.payload.ip.ipc = pt_ipc_full;
		else if (s->nip % 11 == 0)
			p.payload.ip.ipc = pt_ipc_sext_48;
		else if (s->nip % 7 == 0 && p.payload.ip.ipc != pt_ipc_full && p.payload.ip.ipc != pt_ipc_sext_48)
			p.payload.ip.ipc = pt_ipc_update_48;
		else if (s->nip % 5 == 0 && p.payload.ip.ipc == pt_ipc_update_16)
			p.payload.ip.ipc = pt_ipc_update_32;
		p.payload.ip.ip = ip;
		s->last_ip = ip;
	}
	emit(s, &p);
}

static void emit_cyc(struct ptstream *s)
{
	if (!s->cfg->cyc || s->tsc <= s->cyc_ref)
		return;
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = s->tsc - s->cyc_ref;
	emit(s, &p);
	s->cyc_ref = s->tsc;
}

static uint64_t mtc_step(const struct ptstream *s)
{
	return (uint64_t)s->cfg->ctc_ratio << s->cfg->mtc_period;
}

static void note_timing(struct ptstream *s)
{
	if (!s->track_timing || s->dropping)
		return;
	if (s->ntiming == s->timingcap) {
		s->timingcap = s->timingcap ? 2 * s->timingcap : 256;
		s->timing = realloc(s->timing, s->timingcap * sizeof(*s->timing));
		if (!s->timing) {
			fprintf(stderr, "ptgen: out of memory\n");
			exit(4);
		}
	}
	s->timing[s->ntiming++] = s->len;
}

static void emit_tsc_tma(struct ptstream *s)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	note_timing(s);
	p.type = ppt_tsc;
	p.payload.tsc.tsc = s->tsc & ((1ull << 56) - 1);
	emit(s, &p);
	if (s->cfg->mtc) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_tma;
		note_timing(s);
		p.payload.tma.ctc = (uint16_t)(s->tsc / s->cfg->ctc_ratio);
		p.payload.tma.fc = (uint16_t)(s->tsc % s->cfg->ctc_ratio);
		emit(s, &p);
	}
	s->next_mtc = (s->tsc / mtc_step(s) + 1) * mtc_step(s);
}

static void emit_mode_exec(struct ptstream *s)
{
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	emit(s, &p);
}

int ps_init(struct ptstream *s, const struct ptcfg *cfg, uint64_t tsc)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	struct pt_config c;
	pt_config_init(&c);
	c.begin = s->tmp;
	c.end = s->tmp + sizeof(s->tmp);
	s->enc = pt_alloc_encoder(&c);
	if (!s->enc)
		return -1;
	s->tsc = tsc;
	s->cyc_ref = tsc;          /* the cycle counter starts with tracing */
	s->next_psb = cfg->psb_bytes;
	s->thread = -1;
	return 0;
}

void ps_free(struct ptstream *s)
{
	pt_free_encoder(s->enc);
	free(s->buf);
	free(s->psb);
	free(s->timing);
	memset(s, 0, sizeof(*s));
}

void ps_flush(struct ptstream *s)
{
	if (!s->ntnt)
		return;
	emit_cyc(s);
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = s->ntnt <= 6 ? ppt_tnt_8 : ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)s->ntnt;
	p.payload.tnt.payload = s->tnt;
	emit(s, &p);
	s->tnt = 0;
	s->ntnt = 0;
}

static void tnt_bit(struct ptstream *s, int taken)
{
	s->tnt = (s->tnt << 1) | (taken ? 1 : 0);
	if (++s->ntnt == 47)
		ps_flush(s);
}

static void rs_clear(struct ptstream *s) { s->rs_n = 0; }

static void rs_push(struct ptstream *s, uint64_t ip)
{
	s->rs_top = (s->rs_top + 1) % 64;
	s->rs[s->rs_top] = ip;
	if (s->rs_n < 64)
		s->rs_n++;
}

void ps_psb(struct ptstream *s)
{
	ps_flush(s);
	if (!s->dropping) {
		if (s->npsb == s->psbcap) {
			s->psbcap = s->psbcap ? 2 * s->psbcap : 64;
			s->psb = realloc(s->psb, s->psbcap * sizeof(*s->psb));
			if (!s->psb) {
				fprintf(stderr, "ptgen: out of memory\n");
				exit(4);
			}
		}
		s->psb[s->npsb++] = (struct psb_mark){ s->len, s->tsc & ((1ull << 56) - 1), s->thread,
						       s->index, s->enabled };
	}
	emit_simple(s, ppt_psb);
	s->last_ip = 0;
	rs_clear(s);
	emit_tsc_tma(s);
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cbr;
	p.payload.cbr.ratio = (uint8_t)(s->cbr ? s->cbr : s->cfg->nom_ratio);
	emit(s, &p);
	if (s->enabled) {
		emit_mode_exec(s);
		struct pt_packet f;
		memset(&f, 0, sizeof(f));
		f.type = ppt_fup;
		f.payload.ip.ipc = pt_ipc_full;
		f.payload.ip.ip = s->cur_ip;
		s->last_ip = s->cur_ip;
		emit(s, &f);
	}
	emit_simple(s, ppt_psbend);
	s->next_psb = s->len + s->cfg->psb_bytes;
}

void ps_enable(struct ptstream *s, uint64_t ip)
{
	emit_tsc_tma(s);
	emit_mode_exec(s);
	emit_ip(s, ppt_tip_pge, ip, 0);
	s->enabled = 1;
	s->cur_ip = ip;
}

void ps_interrupt(struct ptstream *s, uint64_t ip)
{
	ps_flush(s);
	emit_cyc(s);
	emit_ip(s, ppt_fup, ip, 0);
	emit_ip(s, ppt_tip_pgd, 0, 1);
	s->enabled = 0;
	rs_clear(s);
}

void ps_idle(struct ptstream *s, uint64_t cycles)
{
	s->tsc += cycles;
}

static void mtc_due(struct ptstream *s)
{
	if (!s->cfg->mtc)
		return;
	while (s->tsc >= s->next_mtc) {
		struct pt_packet p;
		memset(&p, 0, sizeof(p));
		p.type = ppt_mtc;
		p.payload.mtc.ctc = (uint8_t)((s->next_mtc / s->cfg->ctc_ratio) >> s->cfg->mtc_period);
		emit(s, &p);
		s->next_mtc += mtc_step(s);
	}
}

static int in_filter(const struct ptcfg *c, uint64_t ip)
{
	return ip >= c->filt_a && ip <= c->filt_b;
}

/* IP filtering: @in, with tracing on, leaves the region for @next. */
static void leave_filter(struct ptstream *s, const struct insn *in, uint64_t next)
{
	if (in->kind == IK_JCC || in->kind == IK_SYSCALL || in->kind == IK_SYSRET || in->kind == IK_OTHER ||
	    in->kind == IK_PTWRITE) {
		fprintf(stderr, "ptgen: the flow leaves the filter region at 0x%llx other than by a jump, call or "
			"return\n", (unsigned long long)in->ip);
		exit(4);
	}
	ps_flush(s);
	emit_cyc(s);
	int direct = in->kind == IK_JMP || in->kind == IK_CALL;
	if (direct && s->cfg->skl014)
		emit_ip(s, ppt_tip_pgd, 0, 1);
	else
		emit_ip(s, ppt_tip_pgd, next, 0);
	s->enabled = 0;
	rs_clear(s);
}

/* IP filtering: instruction @in leaves or enters the region (1: handled here, nothing else to emit). */
static int filter_insn(struct ptstream *s, const struct insn *in, uint64_t next)
{
	if (!s->cfg->filt_b)
		return 0;
	if (s->enabled && (!next || in_filter(s->cfg, next)))
		return 0;
	if (s->enabled)
		leave_filter(s, in, next);
	s->tsc++;
	s->index++;
	s->cur_ip = next;
	if (next && in_filter(s->cfg, next))
		ps_enable(s, next);
	return 1;
}

void ps_insn(struct ptstream *s, const struct insn *in, uint64_t next)
{
	if (filter_insn(s, in, next))
		return;
	s->cur_ip = in->ip;
	if (s->enabled && !s->dropping && s->len >= s->next_psb)
		ps_psb(s);
	uint64_t nip = in->ip + in->size;
	switch (in->kind) {
	case IK_JCC:
		tnt_bit(s, next != nip);
		break;
	case IK_CALL:
		if (in->target != nip)   /* a call to the next instruction is not pushed */
			rs_push(s, nip);
		break;
	case IK_CALL_IND:
		rs_push(s, nip);
		/* fall through */
	case IK_JMP_IND:
		ps_flush(s);
		emit_cyc(s);
		emit_ip(s, ppt_tip, next, 0);
		break;
	case IK_RET:
		if (!s->cfg->noretcomp && s->rs_n && s->rs[s->rs_top] == next) {
			s->rs_top = (s->rs_top + 63) % 64;
			s->rs_n--;
			tnt_bit(s, 1);
		} else {
			ps_flush(s);
			emit_cyc(s);
			emit_ip(s, ppt_tip, next, 0);
		}
		break;
	case IK_SYSCALL:
		ps_flush(s);
		emit_cyc(s);
		if (s->cfg->kernel) {
			emit_ip(s, ppt_tip, next, 0);
		} else {
			emit_ip(s, ppt_tip_pgd, 0, 1);
			s->enabled = 0;
		}
		rs_clear(s);
		break;
	case IK_SYSRET:
		ps_flush(s);
		emit_cyc(s);
		emit_ip(s, ppt_tip, next, 0);
		rs_clear(s);
		break;
	default:
		break;
	}
	s->tsc++;
	s->index++;
	s->cur_ip = next;
	if (s->enabled)
		mtc_due(s);
	if (s->cut_every && s->len >= s->next_cut && !s->dropping) {
		ps_cut(s);
		s->next_cut = s->len + s->cut_every;
	}
}

void ps_cut(struct ptstream *s)
{
	if (s->ncuts >= 256 || (s->ncuts && s->cuts[s->ncuts - 1].offset == s->len))
		return;
	s->cuts[s->ncuts].offset = s->len;
	s->cuts[s->ncuts++].tsc = s->tsc;
}

void ps_stop(struct ptstream *s)
{
	ps_flush(s);
	s->dropping = 1;
}

void ps_restart(struct ptstream *s)
{
	s->dropping = 0;
	s->tnt = 0;
	s->ntnt = 0;
	s->enabled = 0;
	ps_psb(s);
}

void ps_overflow_begin(struct ptstream *s)
{
	ps_flush(s);
	s->dropping = 1;
}

void ps_overflow_end(struct ptstream *s, uint64_t ip)
{
	s->dropping = 0;
	s->tnt = 0;
	s->ntnt = 0;
	emit_simple(s, ppt_ovf);
	emit_tsc_tma(s);
	s->last_ip = 0;
	emit_ip(s, ppt_fup, ip, 0);
	rs_clear(s);
	s->cur_ip = ip;
}

void ps_pad(struct ptstream *s)
{
	static const uint8_t zero[8];
	ps_flush(s);
	if (s->len % 8)
		out_bytes(s, zero, 8 - s->len % 8);
}

void ps_ptw(struct ptstream *s, uint64_t payload, int bytes, uint64_t ip, int fup)
{
	ps_flush(s);
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_ptw;
	p.payload.ptw.plc = bytes == 8 ? 1 : 0;      /* payload size code: 0 = 4 bytes, 1 = 8 bytes */
	p.payload.ptw.payload = payload;
	p.payload.ptw.ip = fup ? 1 : 0;
	emit(s, &p);
	if (fup) {
		emit_cyc(s);
		emit_ip(s, ppt_fup, ip, 0);
	}
}

void ps_cbr(struct ptstream *s, unsigned ratio)
{
	ps_flush(s);
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cbr;
	p.payload.cbr.ratio = (uint8_t)ratio;
	emit(s, &p);
	s->cbr = ratio;
}

void ps_sleep(struct ptstream *s, uint64_t ip, const struct ptsleep *z)
{
	ps_flush(s);
	struct pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = ppt_mwait;
	p.payload.mwait.hints = z->hints;
	p.payload.mwait.ext = z->ext;
	emit(s, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_pwre;
	p.payload.pwre.state = z->state;
	p.payload.pwre.sub_state = z->sub_state;
	emit(s, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_exstop;
	p.payload.exstop.ip = 1;
	emit(s, &p);
	emit_cyc(s);
	emit_ip(s, ppt_fup, ip, 0);
	s->tsc += z->ticks;
	emit_tsc_tma(s);          /* awake: time is known again before the PWRX (no MTC while asleep) */
	memset(&p, 0, sizeof(p));
	p.type = ppt_pwrx;
	p.payload.pwrx.last = z->last;
	p.payload.pwrx.deepest = z->deepest;
	p.payload.pwrx.interrupt = (z->wake & 1) != 0;
	p.payload.pwrx.store = (z->wake & 4) != 0;
	p.payload.pwrx.autonomous = (z->wake & 8) != 0;
	emit(s, &p);
}
