/*
 * ptgen - Intel PT perf.data fixtures with ground truth, made without PT
 * hardware (fixture format in tests/fixtures/intel-pt-gen/README.md).
 *
 *   ptgen trace PROG FLOW            single-step PROG (ptrace), write its flow file
 *   ptgen ktrace KIMG KFLOW          single-step the stand-in kernel KIMG (a user
 *                                    copy): its system call path (thread 0 of
 *                                    KFLOW) and its exit path (thread 1)
 *   ptgen fixture VARIANT PROG FLOW NAME OUTDIR [--times] [--kernel KIMG KFLOW] [--as PATH]
 *                                    [--kaslr DELTA]
 *                                    OUTDIR/perf.data + OUTDIR/expected.txt +
 *                                    OUTDIR/branches-T.txt for one variant;
 *                                    --times: also OUTDIR/times-T.txt, the perf
 *                                    time of each decodable instruction;
 *                                    --kernel: every system call of PROG runs
 *                                    KIMG's path from KFLOW (variant "kernel");
 *                                    --as: PROG is recorded as PATH (default
 *                                    /rbfix/NAME); --kaslr DELTA: the kernel
 *                                    text runs DELTA (2 MiB steps) higher than
 *                                    linked
 *   ptgen insns PROG FLOW EXPECTED T [--kernel KIMG KFLOW [--kaslr DELTA]]
 *                                    print the instruction addresses of thread T
 *                                    that a decoder recovers (visible ranges)
 *   ptgen kcore KIMG OUT             OUT: a kcore-like ELF (ET_CORE) holding
 *                                    KIMG's text (and modules') in PT_LOADs at
 *                                    other file offsets than in KIMG
 *   ptgen remap PROG1 FLOW1 PROG2 FLOW2 OUT [pid-reuse]
 *                                    PROG1 runs, then PROG2 is mapped over its
 *                                    text (no exec) and runs in the same thread;
 *                                    pid-reuse: in a new process with the same pid
 *   ptgen ipt PERFDATA PROG QUEUE   decode one AUX queue with libipt (second oracle)
 *   ptgen large PROG FLOW MB OUT [CPUS [threads|exec|late]]
 *                                    a benchmark perf.data with about MB megabytes
 *                                    of trace (CPUS queues); counts on stdout;
 *                                    threads: each repetition a new thread;
 *                                    late: a map-changing record out of order
 *
 * Exit status: 0 done, 1 bad command line, 2 input unreadable, 3 ptrace
 * refused (the caller may skip), 4 internal failure, 5 (ipt) libipt reported
 * decode errors.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ptgen.h"

#define START_TSC 2400000000000ull    /* perf time 1000 s */
#define PID 4242u
#define KMOD_PATH "/lib/modules/6.1.0-ptgen/kmod.ko"   /* the stand-in kernel's module, "[kmod]" */

struct gen {
	struct image im;
	struct image kim;     /* the stand-in kernel (--kernel), text_size 0 if none */
	struct flow fl;
	struct truth tr;
	struct ptcfg cfg;
	const char *name;     /* recorded comm and file name /rbfix/<name> */
	char recname[128];
};

__attribute__((format(printf, 2, 3), noreturn)) static void die(int code, const char *fmt, ...);
static void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ptgen: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void insn_at(struct gen *g, uint64_t ip, struct insn *in)
{
	if (image_insn(&g->im, ip, in) < 0)
		die(2, "flow address 0x%" PRIx64 " is not a decodable instruction of %s", ip, g->im.path);
}

static void default_cfg(struct ptcfg *c)
{
	memset(c, 0, sizeof(*c));
	c->mtc = 1;
	c->cyc = 1;
	c->mtc_period = 3;
	c->ctc_ratio = 100;       /* 24 MHz crystal, 2.4 GHz TSC */
	c->nom_ratio = 24;
	c->psb_bytes = 512;
	c->syscall_cycles = 2400;
	c->irq_cycles = 4800;
}

/* --------------------------------------------------------- expected files */

static const char *branch_kind(int kind)
{
	switch (kind) {
	case IK_JCC: return "jcc";
	case IK_JMP: case IK_JMP_IND: return "jmp";
	case IK_CALL: case IK_CALL_IND: return "call";
	case IK_RET: return "return";
	case IK_SYSCALL: return "syscall";
	case IK_SYSRET: return "sysret";
	}
	return NULL;
}

static size_t write_branches(struct gen *g, int t, FILE *out)
{
	const struct thread_flow *th = &g->fl.th[t];
	const uint8_t *fl = g->tr.flags[t];
	size_t nb = 0;
	for (size_t i = 0; i < th->n; i++) {
		if (!(fl[i] & TF_VISIBLE))
			continue;
		if (fl[i] & TF_BEGIN) {
			fprintf(out, "0 %" PRIx64 " tr_strt\n", th->ip[i]);
			nb++;
		}
		struct insn in;
		insn_at(g, th->ip[i], &in);
		const char *k = branch_kind(in.kind);
		if (fl[i] & TF_LEAVE) {
			fprintf(out, "%" PRIx64 " %" PRIx64 " tr_end_%s\n", th->ip[i], th->ip[i + 1], k);
			nb++;
		} else if (in.kind == IK_SYSCALL && !g->cfg.kernel) {
			fprintf(out, "%" PRIx64 " 0 tr_end_syscall\n", th->ip[i]);
			nb++;
		} else if (k && i + 1 < th->n && !(in.kind == IK_JCC && th->ip[i + 1] == th->ip[i] + in.size)) {
			fprintf(out, "%" PRIx64 " %" PRIx64 " %s\n", th->ip[i], th->ip[i + 1], k);
			nb++;
		}
		if ((fl[i] & TF_ASYNC_AFTER) && i + 1 < th->n) {
			fprintf(out, "%" PRIx64 " 0 tr_end_async\n", th->ip[i + 1]);
			nb++;
		}
	}
	return nb;
}

/* The branches write_branches would write for thread @t: the counts large and remap print. */
static size_t count_branches(struct gen *g, int t)
{
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		die(4, "%s", "cannot open /dev/null");
	size_t n = write_branches(g, t, null);
	fclose(null);
	return n;
}

/* times-T.txt (not committed): "ip perf_ns" of each decodable instruction of thread T. */
static void write_times(struct gen *g, int t, const char *dir)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/times-%d.txt", dir, t);
	FILE *f = fopen(path, "w");
	if (!f)
		die(2, "cannot write %s", path);
	for (size_t i = 0; i < g->fl.th[t].n; i++)
		if (g->tr.flags[t][i] & TF_VISIBLE)
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", g->fl.th[t].ip[i], wrap_perf_time(g->tr.tsc[t][i]));
	fclose(f);
}

static void write_expected(struct gen *g, const char *dir, const char *variant, const char *desc, int times)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/expected.txt", dir);
	FILE *e = fopen(path, "w");
	if (!e)
		die(2, "cannot write %s", path);
	fprintf(e, "# ptgen expected results v1 (format: tests/fixtures/intel-pt-gen/README.md)\n");
	fprintf(e, "program %s\nvariant %s\n# %s\n", g->name, variant, desc);
	for (int t = 0; t < g->fl.nth; t++) {
		char bp[1024];
		snprintf(bp, sizeof(bp), "%s/branches-%d.txt", dir, t);
		FILE *b = fopen(bp, "w");
		if (!b)
			die(2, "cannot write %s", bp);
		size_t nb = write_branches(g, t, b);
		fclose(b);
		if (times)
			write_times(g, t, dir);
		const struct thread_flow *th = &g->fl.th[t];
		size_t vis = 0;
		for (size_t i = 0; i < th->n; i++)
			vis += g->tr.flags[t][i] & TF_VISIBLE;
		fprintf(e, "thread %d pid %u tid %u insns %zu executed %zu branches %zu\n", t, PID, PID + (unsigned)t,
			vis, th->n, nb);
		for (size_t i = 0; i < th->n;) {
			if (!(g->tr.flags[t][i] & TF_VISIBLE)) {
				i++;
				continue;
			}
			size_t j = i;
			while (j < th->n && (g->tr.flags[t][j] & TF_VISIBLE))
				j++;
			fprintf(e, "visible %d %zu %zu\n", t, i, j - i);
			i = j;
		}
	}
	for (int q = 0; q < g->tr.nqueues; q++) {
		fprintf(e, "queue %d cpu %d threads", q, g->tr.per_thread ? -1 : q);
		for (int t = 0; t < g->fl.nth; t++)
			if (g->tr.queue_threads[q] & (1u << t))
				fprintf(e, " %d", t);
		fputc('\n', e);
	}
	if (g->tr.lost_records)
		fprintf(e, "lost-records 0 %" PRIu64 "\n", g->tr.lost_records);
	for (int k = 0; k < g->tr.nev; k++) {
		const struct ptevent *v = &g->tr.ev[k];
		/* the ptwrite payload in hex, the other values in decimal */
		fprintf(e, strcmp(v->kind, "ptwrite") ? "event %s %d %" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n"
						      : "event %s %d %" PRIx64 " %" PRIu64 " %" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
			v->kind, v->thread, v->ip, wrap_perf_time(v->tsc), v->v[0], v->v[1], v->v[2]);
	}
	if (!g->cfg.cyc)   /* without CYC decoders date by MTC: steps of 2^mtc_period crystal ticks */
		fprintf(e, "time-mean-limit %d\n", 250);
	for (int k = 0; k < g->tr.ngaps; k++) {   /* what perf's decoder reports for the losses it sees in the trace */
		const char *r = g->tr.gaps[k].reason;
		if (!strcmp(r, "overflow"))
			fprintf(e, "perf-error 7 Overflow packet\n");
		else if (!strcmp(r, "aux-truncated"))
			fprintf(e, "perf-error 8 Lost trace data\n");
	}
	for (int k = 0; k < g->tr.ngaps; k++) {
		const struct gap *gp = &g->tr.gaps[k];
		const struct thread_flow *th = &g->fl.th[gp->thread];
		/* perf times: the last decodable instruction before the gap, the first after */
		size_t a = gp->first, b = gp->first + gp->count;
		uint64_t t0 = a ? wrap_perf_time(g->tr.tsc[gp->thread][a - 1]) : 0;
		uint64_t t1 = b < th->n ? wrap_perf_time(g->tr.tsc[gp->thread][b]) : 0;
		fprintf(e, "gap %d %zu %zu %" PRIx64 " %" PRIx64 " %s %" PRIu64 " %" PRIu64 "\n", gp->thread, a,
			gp->count, th->ip[a], th->ip[b - 1], gp->reason, t0, t1);
	}
	fclose(e);
}

/* ---------------------------------------------------------------- drivers */

static void truth_init(struct gen *g)
{
	for (int t = 0; t < g->fl.nth; t++) {
		g->tr.flags[t] = calloc(g->fl.th[t].n + 1, 1);
		g->tr.tsc[t] = calloc(g->fl.th[t].n + 1, sizeof(uint64_t));
		if (!g->tr.flags[t] || !g->tr.tsc[t])
			die(4, "%s", "out of memory");
		for (size_t i = 0; i < g->fl.th[t].n; i++)
			g->tr.flags[t][i] = TF_VISIBLE;
	}
}

static void add_gap(struct gen *g, int t, size_t first, size_t count, const char *reason)
{
	if (!count)
		return;
	if (g->tr.ngaps >= (int)(sizeof(g->tr.gaps) / sizeof(g->tr.gaps[0])))
		die(4, "%s", "too many gaps");
	g->tr.gaps[g->tr.ngaps++] = (struct gap){ t, first, count, reason };
	for (size_t i = first; i < first + count; i++)
		g->tr.flags[t][i] &= (uint8_t)~(TF_VISIBLE | TF_BEGIN);
	g->tr.flags[t][first + count] |= TF_LOSS;
}

static int needs_trace(struct gen *g, int t, size_t i)
{
	struct insn in;
	insn_at(g, g->fl.th[t].ip[i], &in);
	return in.kind == IK_JCC || in.kind == IK_JMP_IND || in.kind == IK_CALL_IND || in.kind == IK_RET;
}

/*
 * Where a loss starts: the first index >= @from that follows an instruction
 * which consumed trace (a TNT bit or a TIP). The packets before the loss
 * prove every instruction before it; the straight-line instructions after
 * it are not proven, and neither perf nor libipt reports them (both see the
 * end of the data or the OVF before walking on).
 */
static size_t loss_start(struct gen *g, int t, size_t from)
{
	for (size_t i = from < 1 ? 1 : from; i + 1 < g->fl.th[t].n; i++)
		if (needs_trace(g, t, i - 1))
			return i;
	die(4, "%s", "no place for a loss in the flow");
}

/* An index >= @from whose instruction is not a system call and does not follow one. */
static size_t plain_index(struct gen *g, int t, size_t from)
{
	for (size_t i = from < 1 ? 1 : from; i + 1 < g->fl.th[t].n; i++) {
		struct insn a, b;
		insn_at(g, g->fl.th[t].ip[i], &a);
		insn_at(g, g->fl.th[t].ip[i - 1], &b);
		if (a.kind != IK_SYSCALL && b.kind != IK_SYSCALL)
			return i;
	}
	die(4, "%s", "no plain instruction in the flow");
	return 0;
}

/* Called before instruction @i of thread @t is encoded (variants inject events). */
typedef void (*insn_hook)(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx);

/*
 * Run thread @t's instructions [from, to) on stream @s. A system call's
 * return re-enables tracing unless it is the span's last instruction (the
 * caller then decides what runs next).
 */
static void run_span(struct gen *g, struct ptstream *s, int t, size_t from, size_t to, insn_hook hook, void *ctx)
{
	const struct thread_flow *th = &g->fl.th[t];
	s->thread = t;
	s->index = from;
	for (size_t i = from; i < to; i++) {
		if (hook)
			hook(g, s, t, i, ctx);
		struct insn in;
		insn_at(g, th->ip[i], &in);
		uint64_t next = i + 1 < th->n ? th->ip[i + 1] : 0;
		g->tr.tsc[t][i] = s->tsc;
		ps_insn(s, &in, next);
		if (in.kind == IK_SYSCALL && i + 1 < to && !g->cfg.kernel) {
			ps_idle(s, g->cfg.syscall_cycles);
			ps_enable(s, next);
			g->tr.flags[t][i + 1] |= TF_BEGIN;
		}
	}
}

/* Tracing (re)starts for thread @t at instruction @i. */
static void enable_at(struct gen *g, struct ptstream *s, int t, size_t i)
{
	s->thread = t;
	s->index = i;
	ps_enable(s, g->fl.th[t].ip[i]);
	g->tr.flags[t][i] |= TF_BEGIN;
}

/* An interrupt before instruction @i of thread @t: FUP, TIP.PGD. */
static void interrupt_at(struct gen *g, struct ptstream *s, int t, size_t i)
{
	ps_interrupt(s, g->fl.th[t].ip[i]);
	g->tr.flags[t][i - 1] |= TF_ASYNC_AFTER;
}

/*
 * AUX chunks end at the stream's cut points (packet boundaries, as the AUX
 * head is when tracing stops) and at its end: per chunk an AUX record
 * (kernel; @trunc_at: the chunk ending there is flagged TRUNCATED) and an
 * AUXTRACE record with the bytes, padded to 8 (zeros: PAD packets).
 */
static void write_chunks(struct wrap *w, struct ptstream *s, int cpu, uint32_t tid, uint64_t tsc_end,
			 size_t trunc_at)
{
	size_t off = 0;
	for (int k = 0; k <= s->ncuts; k++) {
		size_t end = k < s->ncuts ? s->cuts[k].offset : s->len;
		uint64_t tsc = k < s->ncuts ? s->cuts[k].tsc : tsc_end;
		if (end <= off)
			continue;
		wrap_aux(w, cpu, tsc, PID, tid, off, end - off, end == trunc_at ? 1 /* TRUNCATED */ : 0);
		wrap_auxtrace(w, cpu, tsc, tid, off, s->buf + off, end - off);
		off = end;
	}
}

static int pipe_mode;   /* the next perf.data is written in pipe mode */
static const char *recorded_as;   /* --as PATH: the program's recorded file name */
static uint64_t kaslr;            /* --kaslr DELTA: the kernel text runs this much higher than linked */

static struct wrap *open_wrap_mode(struct gen *g, const char *out, int ncpus, int snapshot, int sched_switch,
				   int per_thread)
{
	g->tr.per_thread = per_thread;
	g->tr.nqueues = ncpus;
	for (int q = 0; q < ncpus; q++)   /* one thread per CPU unless the variant says otherwise */
		g->tr.queue_threads[q] = q < g->fl.nth ? 1u << q : 0;
	struct wrap_cfg wc = { .pt = &g->cfg, .ncpus = ncpus, .snapshot = snapshot,
			       .have_sched_switch = sched_switch, .per_thread = per_thread, .pipe = pipe_mode };
	wc.img[0] = &g->im;
	wc.img_name[0] = g->recname;
	wc.kimg = g->cfg.kernel ? &g->kim : NULL;
	struct wrap *w;
	char path[1024];
	snprintf(path, sizeof(path), "%s/perf.data", out);
	if (wrap_open(&w, path, &wc) < 0)
		exit(4);
	return w;
}

static struct wrap *open_wrap(struct gen *g, const char *out, int ncpus, int snapshot, int sched_switch)
{
	return open_wrap_mode(g, out, ncpus, snapshot, sched_switch, 0);
}

/* The process's sideband up to its first instruction: COMM (exec), MMAP2, ITRACE_START, SWITCH in. */
static void process_start(struct gen *g, struct wrap *w, uint64_t t0)
{
	if (g->cfg.kernel) {
		wrap_kernel_mmap(w, t0 + 50, &g->kim, "[kernel.kallsyms]_text");
		for (const struct image *m = g->kim.next; m; m = m->next)   /* its modules: one, kmod */
			wrap_kernel_mmap(w, t0 + 60, m, KMOD_PATH);
	}
	wrap_comm(w, 0, t0 + 100, PID, PID, g->name, 1);
	wrap_mmap2(w, 0, t0 + 200, PID, PID, &g->im, g->recname);
	wrap_itrace_start(w, 0, t0 + 300, PID, PID);
	wrap_switch(w, 0, t0 + 400, PID, PID, 0);
}

static void stream_init(struct gen *g, struct ptstream *s, size_t cut_every)
{
	if (ps_init(s, &g->cfg, START_TSC) < 0)
		die(4, "%s", "libipt: cannot allocate an encoder");
	s->cut_every = cut_every;
	s->next_cut = cut_every;
	ps_psb(s);              /* TraceEn set in the kernel: PSB+ without FUP */
	ps_idle(s, 1000);
}

static void finish_single(struct gen *g, struct wrap *w, struct ptstream *s, size_t trunc_at)
{
	ps_pad(s);
	uint64_t tend = s->tsc + 500;
	wrap_switch(w, 0, tend - 100, PID, PID, 1);
	wrap_fork(w, 0, tend, PID, PID, PID, 1);
	write_chunks(w, s, 0, PID, tend, trunc_at);
	wrap_round(w);
	if (wrap_close(w) < 0)
		exit(4);
	ps_free(s);
}

/* ------------------------------------------------------------- variants */

static void variant_full(struct gen *g, const char *out)
{
	struct ptstream s;
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 600);
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, g->fl.th[0].n, NULL, NULL);
	finish_single(g, w, &s, 0);
}

struct loss { size_t k1, k2; };

static void hook_ovf(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx)
{
	struct loss *l = ctx;
	if (i == l->k1)
		ps_overflow_begin(s);
	if (i == l->k2) {
		ps_overflow_end(s, g->fl.th[t].ip[i]);
		g->tr.flags[t][i] |= TF_BEGIN;
	}
}

static void variant_ovf(struct gen *g, const char *out)
{
	struct ptstream s;
	struct loss l;
	l.k1 = loss_start(g, 0, g->fl.th[0].n / 3);
	l.k2 = plain_index(g, 0, l.k1 + 700);
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 600);
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, g->fl.th[0].n, hook_ovf, &l);
	add_gap(g, 0, l.k1, l.k2 - l.k1, "overflow");
	finish_single(g, w, &s, 0);
}

static void hook_trunc(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx)
{
	struct loss *l = ctx;
	if (i == l->k1) {
		ps_stop(s);
		ps_cut(s);   /* the AUX record that filled the buffer ends here */
	}
	if (i == l->k2) {
		ps_restart(s);
		ps_idle(s, 1000);
		enable_at(g, s, t, i);
	}
}

static void variant_truncated(struct gen *g, const char *out)
{
	struct ptstream s;
	struct loss l;
	l.k1 = loss_start(g, 0, g->fl.th[0].n / 2);
	l.k2 = plain_index(g, 0, l.k1 + 900);
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 0);
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, g->fl.th[0].n, hook_trunc, &l);
	add_gap(g, 0, l.k1, l.k2 - l.k1, "aux-truncated");
	g->tr.flags[0][l.k2] |= TF_BEGIN;
	finish_single(g, w, &s, s.cuts[0].offset);
}

static void variant_lost(struct gen *g, const char *out)
{
	struct ptstream s;
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 600);
	enable_at(g, &s, 0, 0);
	size_t half = g->fl.th[0].n / 2;
	run_span(g, &s, 0, 0, half, NULL, NULL);
	wrap_lost(w, 0, s.tsc, PID, PID, 3);   /* 3 sideband records lost; the trace is whole */
	g->tr.lost_records = 3;
	run_span(g, &s, 0, half, g->fl.th[0].n, NULL, NULL);
	finish_single(g, w, &s, 0);
}

/*
 * Snapshot mode: an AUX ring of @ring bytes; at each snapshot point the task
 * is interrupted (FUP, TIP.PGD), perf copies the ring (AUX record with
 * OVERWRITE, aux_offset = head), and tracing restarts (PSB+ in the kernel,
 * then TIP.PGE when the task resumes).
 */
struct snap { size_t at[4]; int n; size_t head[5]; uint64_t tsc[5]; int nsnap; };

static void hook_snap(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx)
{
	struct snap *sn = ctx;
	for (int k = 0; k < sn->n; k++) {
		if (sn->at[k] != i)
			continue;
		interrupt_at(g, s, t, i);
		sn->head[sn->nsnap] = s->len;
		sn->tsc[sn->nsnap++] = s->tsc;
		ps_idle(s, g->cfg.irq_cycles);
		ps_restart(s);
		ps_idle(s, 200);
		enable_at(g, s, t, i);
	}
}

static void snapshot_variant(struct gen *g, const char *out, size_t ring, const double *where, int nwhere)
{
	struct ptstream s;
	struct snap sn;
	memset(&sn, 0, sizeof(sn));
	g->cfg.psb_bytes = 256;
	size_t n = g->fl.th[0].n;
	for (int k = 0; k < nwhere; k++)
		sn.at[sn.n++] = plain_index(g, 0, (size_t)((double)n * where[k]));
	struct wrap *w = open_wrap(g, out, 1, 1, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 0);
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, n, hook_snap, &sn);
	sn.head[sn.nsnap] = s.len;      /* the last snapshot, at exit */
	sn.tsc[sn.nsnap++] = s.tsc;
	ps_pad(&s);
	/* what each snapshot holds, and what a decoder recovers from it */
	size_t prev_end = 0;
	int prev_t = 0;
	size_t prev_idx = 0;            /* first instruction not yet decoded */
	for (int k = 0; k < sn.nsnap; k++) {
		size_t head = sn.head[k], size = head < ring ? head : ring, start = head - size;
		if (start > prev_end) {
			/* a hole: the decoder resyncs at the first PSB at or after start */
			size_t m = 0;
			while (m < s.npsb && s.psb[m].offset < start)
				m++;
			if (m == s.npsb || s.psb[m].offset >= head)
				die(4, "%s", "snapshot without a PSB");
			size_t resume = s.psb[m].index;
			add_gap(g, prev_t, prev_idx, resume - prev_idx,
				k ? "snapshot-hole" : "overwritten-before-first-snapshot");
			if (s.psb[m].enabled)   /* sync at PSB+ FUP: no trace-begin branch (as perf) */
				g->tr.flags[prev_t][resume] &= (uint8_t)~TF_BEGIN;
		}
		/* the copy of the ring: the bytes padded to 8 are whatever the ring holds */
		size_t padded = (size + 7) & ~(size_t)7;
		uint8_t *copy = calloc(1, padded + 8);
		memcpy(copy, s.buf + start, size);
		wrap_aux(w, 0, sn.tsc[k] + 50, PID, PID, head, size, 2 /* OVERWRITE */);
		wrap_auxtrace(w, 0, sn.tsc[k] + 100, PID, start, copy, size);
		free(copy);
		prev_end = head;
		prev_idx = k < sn.n ? sn.at[k] : n;
		prev_t = 0;
	}
	uint64_t tend = s.tsc + 500;
	wrap_switch(w, 0, tend - 100, PID, PID, 1);
	wrap_fork(w, 0, tend, PID, PID, PID, 1);
	wrap_round(w);
	if (wrap_close(w) < 0)
		exit(4);
	ps_free(&s);
}

static void variant_snapshot(struct gen *g, const char *out)
{
	static const double where[] = { 0.3, 0.55, 0.8 };
	snapshot_variant(g, out, 2048, where, 3);
}

static void variant_snapshot_hole(struct gen *g, const char *out)
{
	static const double where[] = { 0.25, 0.75 };
	snapshot_variant(g, out, 512, where, 2);
}


/* ------------------------------------------------------- two threads */

/* Indices of thread @t's system calls. */
static int syscalls_of(struct gen *g, int t, size_t *out, int max)
{
	int n = 0;
	for (size_t i = 0; i < g->fl.th[t].n && n < max; i++) {
		struct insn in;
		insn_at(g, g->fl.th[t].ip[i], &in);
		if (in.kind == IK_SYSCALL)
			out[n++] = i;
	}
	return n;
}

static void need_threads(struct gen *g)
{
	if (g->fl.nth != 2)
		die(2, "%s: this variant needs a program with two threads", g->name);
}

/*
 * Per-CPU, two CPUs: the main thread on CPU 0, its clone on CPU 1, each with
 * its own AUX area; per-task SWITCH records (have_sched_switch 2). The main
 * thread's last sched_yield lasts until the clone has exited, so that its
 * wait finds the clone gone (as in the single-stepped run).
 */
static void two_queues(struct gen *g, const char *out, int per_thread)
{
	need_threads(g);
	size_t sc0[8], sc1[8];
	int n0 = syscalls_of(g, 0, sc0, 8), n1 = syscalls_of(g, 1, sc1, 8);
	if (n0 < 3 || n1 < 1)
		die(2, "%s: expected a clone and sched_yield calls", g->name);
	size_t nt0 = g->fl.th[0].n, nt1 = g->fl.th[1].n;
	struct ptstream s0, s1;
	struct wrap *w = open_wrap_mode(g, out, 2, 0, per_thread ? 0 : 2, per_thread);
	process_start(g, w, START_TSC);
	stream_init(g, &s0, 500);
	enable_at(g, &s0, 0, 0);
	run_span(g, &s0, 0, 0, sc0[0] + 1, NULL, NULL);       /* up to the clone */
	uint64_t tc = s0.tsc;
	wrap_fork(w, 0, tc + 200, PID, PID + 1, PID, 0);
	if (ps_init(&s1, &g->cfg, tc + 600) < 0)
		die(4, "%s", "libipt: cannot allocate an encoder");
	s1.cut_every = 500;
	s1.next_cut = 500;
	wrap_itrace_start(w, 1, tc + 700, PID, PID + 1);
	wrap_switch(w, 1, tc + 800, PID, PID + 1, 0);
	ps_psb(&s1);
	ps_idle(&s1, 400);
	enable_at(g, &s1, 1, 0);
	run_span(g, &s1, 1, 0, nt1, NULL, NULL);
	ps_pad(&s1);
	uint64_t t1end = s1.tsc + 300;
	wrap_switch(w, 1, t1end, PID, PID + 1, 1);
	wrap_fork(w, 1, t1end + 100, PID, PID + 1, PID, 1);
	/* main: after the clone, up to and including its last sched_yield */
	size_t last_yield = sc0[n0 - 2];
	ps_idle(&s0, g->cfg.syscall_cycles);
	enable_at(g, &s0, 0, sc0[0] + 1);
	run_span(g, &s0, 0, sc0[0] + 1, last_yield + 1, NULL, NULL);
	ps_idle(&s0, s0.tsc < t1end + 1000 ? t1end + 1000 - s0.tsc : g->cfg.syscall_cycles);
	enable_at(g, &s0, 0, last_yield + 1);
	run_span(g, &s0, 0, last_yield + 1, nt0, NULL, NULL);
	ps_pad(&s0);
	uint64_t tend = s0.tsc + 500;
	wrap_switch(w, 0, tend - 100, PID, PID, 1);
	wrap_fork(w, 0, tend, PID, PID, PID, 1);
	write_chunks(w, &s0, 0, PID, tend, 0);
	write_chunks(w, &s1, 1, PID + 1, t1end + 200, 0);
	wrap_round(w);
	if (wrap_close(w) < 0)
		exit(4);
	ps_free(&s0);
	ps_free(&s1);
}

static void variant_two_cpus(struct gen *g, const char *out)
{
	two_queues(g, out, 0);
}

/* The same run recorded with --per-thread: one AUX area per thread (AUXTRACE cpu -1, tid). */
static void variant_per_thread(struct gen *g, const char *out)
{
	two_queues(g, out, 1);
}

/* The full trace written as a pipe-mode stream (perf record -o -). */
static void variant_pipe(struct gen *g, const char *out)
{
	pipe_mode = 1;
	variant_full(g, out);
	pipe_mode = 0;
}

/* The full trace with return compression off (config noretcomp): every return is a TIP. */
static void variant_noretcomp(struct gen *g, const char *out)
{
	g->cfg.noretcomp = 1;
	variant_full(g, out);
}

/*
 * One CPU, CPU-wide context-switch sideband (SWITCH_CPU_WIDE, have_sched_switch
 * 3): the threads take turns at their sched_yield calls, and once the main
 * thread is preempted by an interrupt (FUP, TIP.PGD) in the middle of its
 * loop; it resumes there later with TIP.PGE. Nothing of the user-space flow
 * is lost; no PIP (user-only tracing, and both threads share CR3).
 */
struct slice { int t; size_t end; int preempt; };

static void variant_one_cpu(struct gen *g, const char *out)
{
	need_threads(g);
	size_t sc0[8], sc1[8];
	int n0 = syscalls_of(g, 0, sc0, 8), n1 = syscalls_of(g, 1, sc1, 8);
	if (n0 != 5 || n1 != 4)
		die(2, "%s: expected clone, 3 sched_yield, exit_group / 3 sched_yield, exit", g->name);
	size_t p = plain_index(g, 0, (sc0[1] + sc0[2]) / 2);
	const struct slice plan[] = {
		{ 0, sc0[0] + 1, 0 }, { 1, sc1[0] + 1, 0 }, { 0, p, 1 }, { 1, sc1[1] + 1, 0 },
		{ 0, sc0[2] + 1, 0 }, { 1, sc1[2] + 1, 0 }, { 0, sc0[3] + 1, 0 }, { 1, g->fl.th[1].n, 0 },
		{ 0, g->fl.th[0].n, 0 },
	};
	struct ptstream s;
	struct wrap *w = open_wrap(g, out, 1, 0, 3);
	g->tr.queue_threads[0] = 3;
	process_start(g, w, START_TSC);
	stream_init(g, &s, 500);
	size_t cur[2] = { 0, 0 };
	int prev = -1;
	for (size_t k = 0; k < sizeof(plan) / sizeof(plan[0]); k++) {
		int t = plan[k].t;
		if (prev >= 0 && prev != t) {
			uint64_t ts = s.tsc + 300;
			wrap_switch_cpu_wide(w, 0, ts, PID, PID + (unsigned)prev, 1, PID, PID + (unsigned)t);
			wrap_switch_cpu_wide(w, 0, ts + 200, PID, PID + (unsigned)t, 0, PID, PID + (unsigned)prev);
			ps_idle(&s, 600);
		}
		if (t == 1 && cur[1] == 0)
			wrap_fork(w, 0, s.tsc - 500, PID, PID + 1, PID, 0);
		enable_at(g, &s, t, cur[t]);
		run_span(g, &s, t, cur[t], plan[k].end, NULL, NULL);
		if (plan[k].preempt) {
			interrupt_at(g, &s, t, plan[k].end);
			ps_idle(&s, g->cfg.irq_cycles);
		} else {
			ps_idle(&s, g->cfg.syscall_cycles);
		}
		if (plan[k].end == g->fl.th[t].n)
			wrap_fork(w, 0, s.tsc, PID, PID + (unsigned)t, PID, 1);
		cur[t] = plan[k].end;
		prev = t;
	}
	ps_pad(&s);
	write_chunks(w, &s, 0, PID, s.tsc + 500, 0);
	wrap_round(w);
	if (wrap_close(w) < 0)
		exit(4);
	ps_free(&s);
}

/*
 * User and kernel tracing (perf record -e intel_pt//): the full trace of the
 * program with every system call going through the stand-in kernel (TIP to
 * its entry, TIP back at sysretq). The exit path ends at the wrmsr that
 * clears TraceEn: FUP with its IP, TIP.PGD (SDM: WRMSR clearing TraceEn
 * while PacketEn); the wrmsr does not complete in the trace.
 */
static void variant_kernel(struct gen *g, const char *out)
{
	if (!g->cfg.kernel)
		die(1, "%s", "variant kernel needs --kernel KIMG KFLOW");
	struct ptstream s;
	size_t n = g->fl.th[0].n;
	struct insn last;
	insn_at(g, g->fl.th[0].ip[n - 1], &last);
	if (n < 2 || last.ip < g->kim.text_vaddr)
		die(2, "%s: the flow does not end in the kernel's exit path", g->name);
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 600);
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, n - 1, NULL, NULL);
	g->tr.tsc[0][n - 1] = s.tsc;
	interrupt_at(g, &s, 0, n - 1);
	g->tr.flags[0][n - 1] &= (uint8_t)~TF_VISIBLE;
	finish_single(g, w, &s, 0);
}

/*
 * PTWRITE and power events in the loops program (config ptw, fup_on_ptw,
 * pwr_evt; no CYC, so that a change of the core:bus ratio leaves the
 * timing packets as they are): PTWRITEs with their FUP, two changes of the
 * CBR, two C-states (MWAIT, PWRE, EXSTOP + FUP, PWRX). The events sit at
 * plain instructions (the program has no PTWRITE or MWAIT: decoders bind a
 * FUP-carrying event to its IP, whatever the instruction).
 */
static void add_event(struct gen *g, const char *kind, int t, uint64_t ip, uint64_t tsc, uint64_t a, uint64_t b,
		      uint64_t c)
{
	if (g->tr.nev >= (int)(sizeof(g->tr.ev) / sizeof(g->tr.ev[0])))
		die(4, "%s", "too many events");
	g->tr.ev[g->tr.nev++] = (struct ptevent){ kind, t, ip, tsc, { a, b, c } };
}

struct power_plan {
	size_t ptw[5], cbr[2], sleep[2];
};

static void hook_power(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx)
{
	const struct power_plan *pl = ctx;
	static const uint64_t payload[5] = { 0x216b6f /* "ok!" */, 0xfedcba9876543210ull, 0, 0xdeadbeef, 0x100000000ull };
	static const unsigned ratio[2] = { 16, 32 };
	static const struct ptsleep sleeps[2] = {
		{ .hints = 0x20, .ext = 1, .state = 2, .sub_state = 0, .last = 2, .deepest = 3, .wake = 1, .ticks = 3000 },
		{ .hints = 0x10, .ext = 0, .state = 1, .sub_state = 1, .last = 1, .deepest = 1, .wake = 4, .ticks = 1500 },
	};
	uint64_t ip = g->fl.th[t].ip[i];
	for (int k = 0; k < 5; k++)
		if (pl->ptw[k] == i) {
			int bytes = payload[k] >> 32 ? 8 : 4;
			add_event(g, "ptwrite", t, ip, s->tsc, payload[k], 1, 0);
			ps_ptw(s, payload[k], bytes, ip, 1);
		}
	for (int k = 0; k < 2; k++)
		if (pl->cbr[k] == i) {
			add_event(g, "cbr", t, ip, s->tsc, ratio[k], 0, 0);
			ps_cbr(s, ratio[k]);
		}
	for (int k = 0; k < 2; k++)
		if (pl->sleep[k] == i) {
			const struct ptsleep *z = &sleeps[k];
			add_event(g, "mwait", t, ip, s->tsc, z->hints, z->ext, 0);
			add_event(g, "pwre", t, ip, s->tsc, z->state, z->sub_state, 0);
			add_event(g, "exstop", t, ip, s->tsc, 1, 0, 0);
			add_event(g, "pwrx", t, ip, s->tsc + z->ticks, z->deepest, z->last, z->wake);
			ps_sleep(s, ip, z);
		}
}

static void variant_power(struct gen *g, const char *out)
{
	struct ptstream s;
	struct power_plan pl;
	size_t n = g->fl.th[0].n;
	static const double ptw_at[5] = { 0.1, 0.2, 0.35, 0.62, 0.9 }, cbr_at[2] = { 0.3, 0.7 },
			    sleep_at[2] = { 0.45, 0.8 };
	for (int k = 0; k < 5; k++)
		pl.ptw[k] = plain_index(g, 0, (size_t)((double)n * ptw_at[k]));
	for (int k = 0; k < 2; k++) {
		pl.cbr[k] = plain_index(g, 0, (size_t)((double)n * cbr_at[k]));
		pl.sleep[k] = plain_index(g, 0, (size_t)((double)n * sleep_at[k]));
	}
	g->cfg.cyc = 0;
	g->cfg.ptw = g->cfg.fup_on_ptw = g->cfg.pwr_evt = 1;
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 600);
	add_event(g, "cbr", 0, 0, START_TSC, g->cfg.nom_ratio, 0, 0);   /* the first PSB+'s */
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, n, hook_power, &pl);
	finish_single(g, w, &s, 0);
}

/*
 * PTWRITE without FUP (config ptw, not fup_on_ptw), on a program with
 * PTWRITE instructions: a PTW packet as each one retires (pending TNT bits
 * first). Decoders bind such a PTW to the next PTWRITE instruction. The
 * payloads are the generator's (k-th PTWRITE: 0x100 + k, or
 * 0xa5a5a5a500000000 + k for 8 bytes), not the register values, which the
 * flow does not record.
 */
static void hook_ptw(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx)
{
	unsigned *k = ctx;
	struct insn in;
	insn_at(g, g->fl.th[t].ip[i], &in);
	if (in.kind != IK_PTWRITE)
		return;
	uint64_t payload = (in.ptw_bytes == 8 ? 0xa5a5a5a500000000ull : 0x100) + (*k)++;
	add_event(g, "ptwrite", t, in.ip, s->tsc, payload, (uint64_t)g->cfg.fup_on_ptw, 0);
	ps_ptw(s, payload, in.ptw_bytes, in.ip, g->cfg.fup_on_ptw);
}

static void variant_ptw(struct gen *g, const char *out)
{
	struct ptstream s;
	unsigned k = 0;
	g->cfg.ptw = 1;
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC - 1000);   /* the sideband before the trace, which starts sooner */
	/*
	 * Tracing starts 8 cycles after the PSB+, not 1000 (stream_init): the
	 * first CYC then counts nearly the same cycles whether a decoder counts
	 * them from the PSB+ (perf, and this generator) or from TIP.PGE's TSC
	 * (libipt); this short trace has no MTC to correct either
	 */
	if (ps_init(&s, &g->cfg, START_TSC) < 0)
		die(4, "%s", "libipt: cannot allocate an encoder");
	s.cut_every = s.next_cut = 300;
	ps_psb(&s);
	add_event(g, "cbr", 0, 0, START_TSC, g->cfg.nom_ratio, 0, 0);   /* the PSB+'s (CBR packets need no pwr_evt) */
	ps_idle(&s, 8);
	enable_at(g, &s, 0, 0);
	run_span(g, &s, 0, 0, g->fl.th[0].n, hook_ptw, &k);
	finish_single(g, w, &s, 0);
}

/*
 * IP filtering (perf record --filter): only the work function is traced, on
 * a Skylake (erratum SKL014): tracing starts at each branch into it
 * (TIP.PGE) and stops at each branch out (TIP.PGD); leaving by a direct call
 * the TIP.PGD has no IP, and only the filter (AUXTRACE_INFO's string, as
 * perf record writes it: a file offset and size in the object) says where
 * tracing stopped.
 */
static void variant_filter(struct gen *g, const char *out)
{
	static char filter[600];
	const uint64_t a = 0x4010f0, size = 0x7d;   /* work.isra.0 in rbfix/loops */
	struct insn first;
	insn_at(g, a, &first);
	g->cfg.filt_a = a;
	g->cfg.filt_b = a + size - 1;
	g->cfg.skl014 = 1;
	g->cfg.cpuid = "GenuineIntel,6,78,3";
	snprintf(filter, sizeof(filter), "filter 0x%" PRIx64 "/0x%" PRIx64 "@%s",
		 a - g->im.text_vaddr + g->im.text_offset, size, g->recname);
	g->cfg.filter = filter;
	struct ptstream s;
	struct wrap *w = open_wrap(g, out, 1, 0, 2);
	process_start(g, w, START_TSC);
	stream_init(g, &s, 600);
	const struct thread_flow *th = &g->fl.th[0];
	s.thread = 0;
	s.index = 0;
	if (th->ip[0] >= g->cfg.filt_a && th->ip[0] <= g->cfg.filt_b)
		enable_at(g, &s, 0, 0);
	for (size_t i = 0; i < th->n; i++) {
		struct insn in;
		insn_at(g, th->ip[i], &in);
		uint64_t next = i + 1 < th->n ? th->ip[i + 1] : 0;
		int was = s.enabled;
		if (was && in.kind == IK_SYSCALL)
			die(4, "%s", "a system call inside the filter region");
		g->tr.tsc[0][i] = s.tsc;
		ps_insn(&s, &in, next);
		if (!was)
			g->tr.flags[0][i] &= (uint8_t)~TF_VISIBLE;
		else if (!s.enabled)
			g->tr.flags[0][i] |= TF_LEAVE;
		if (!was && s.enabled)
			g->tr.flags[0][i + 1] |= TF_BEGIN;
	}
	finish_single(g, w, &s, 0);
}

struct variant {
	const char *name;
	void (*run)(struct gen *g, const char *out);
	const char *desc;
};

static const struct variant variants[] = {
	{ "full", variant_full, "full trace, one CPU, AUX data in AUXTRACE chunks of about 600 bytes" },
	{ "ovf", variant_ovf, "full trace with an internal buffer overflow: packets lost, then OVF, FUP" },
	{ "truncated", variant_truncated,
	  "AUX area full: the AUX record is flagged TRUNCATED, tracing stops, restarts with PSB+ and TIP.PGE" },
	{ "lost", variant_lost, "full trace and a PERF_RECORD_LOST record (3 sideband records lost)" },
	{ "snapshot", variant_snapshot,
	  "snapshot mode, 2048-byte AUX ring, 4 snapshots that overlap (perf trims the repeated bytes)" },
	{ "snapshot-hole", variant_snapshot_hole,
	  "snapshot mode, 512-byte AUX ring, 3 snapshots with data overwritten between them" },
	{ "two-cpus", variant_two_cpus,
	  "two threads on two CPUs (per-CPU AUX areas), per-task SWITCH records" },
	{ "per-thread", variant_per_thread,
	  "two threads recorded --per-thread: one AUX area per thread (AUXTRACE cpu -1), no switch sideband" },
	{ "pipe", variant_pipe, "full trace in a pipe-mode perf.data (no AUXTRACE index, no BUILD_ID feature)" },
	{ "noretcomp", variant_noretcomp, "full trace with return compression off: every return is a TIP" },
	{ "power", variant_power,
	  "PTWRITE (with FUP) and power events: CBR changes, C-states (MWAIT, PWRE, EXSTOP, PWRX); no CYC" },
	{ "ptw", variant_ptw, "PTWRITE instructions traced without FUP (config ptw, not fup_on_ptw)" },
	{ "filter", variant_filter,
	  "IP filtering on a Skylake: only work.isra.0 traced; leaving by a direct call, TIP.PGD has no IP (SKL014)" },
	{ "one-cpu", variant_one_cpu,
	  "two threads taking turns on one CPU (SWITCH_CPU_WIDE), one preemption by an interrupt" },
	{ "kernel", variant_kernel,
	  "user and kernel traced: system calls enter a stand-in kernel (TIP) and sysretq returns (TIP);"
	  " the exit path's wrmsr stops tracing (FUP, TIP.PGD)" },
};

static const struct variant *find_variant(const char *name)
{
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		if (!strcmp(variants[i].name, name))
			return &variants[i];
	return NULL;
}

/* Open the ELF @path or die. */
static void open_image(struct image *im, const char *path)
{
	char err[512];
	if (image_open(im, path, err, sizeof(err)) < 0)
		die(2, "%s", err);
}

/*
 * With kernel tracing every system call of a thread runs the kernel's path:
 * the system call path (thread 0 of the kernel flow, ending with sysretq)
 * for all but the thread's last, which is exit_group and runs the exit path
 * (thread 1, ending at the wrmsr that stops tracing).
 */
static void splice_kernel(struct gen *g, const struct flow *kf)
{
	for (int t = 0; t < g->fl.nth; t++) {
		struct thread_flow in = g->fl.th[t], out = { 0 };
		size_t last = in.n;
		for (size_t i = 0; i < in.n; i++) {
			struct insn x;
			insn_at(g, in.ip[i], &x);
			if (x.kind == IK_SYSCALL)
				last = i;
		}
		for (size_t i = 0; i < in.n; i++) {
			struct insn x;
			flow_push(&out, in.ip[i]);
			insn_at(g, in.ip[i], &x);
			if (x.kind != IK_SYSCALL)
				continue;
			const struct thread_flow *k = &kf->th[i == last ? 1 : 0];
			for (size_t j = 0; j < k->n; j++)
				flow_push(&out, k->ip[j]);
		}
		free(in.ip);
		g->fl.th[t] = out;
	}
}

static void load_kernel(struct gen *g, const char *prog, const char *flowpath, const char *name,
			const char *kimg, const char *kflow)
{
	char err[512];
	memset(g, 0, sizeof(*g));
	default_cfg(&g->cfg);
	g->name = name;
	if (recorded_as)
		snprintf(g->recname, sizeof(g->recname), "%s", recorded_as);
	else
		snprintf(g->recname, sizeof(g->recname), "/rbfix/%s", name);
	open_image(&g->im, prog);
	if (flow_read(&g->fl, &g->im, flowpath, err, sizeof(err)) < 0)
		die(2, "%s", err);
	if (kimg) {
		struct flow kf;
		open_image(&g->kim, kimg);
		if (flow_read(&kf, &g->kim, kflow, err, sizeof(err)) < 0)
			die(2, "%s", err);
		if (kf.nth != 2)
			die(2, "%s: a kernel flow has two paths (thread 0: system call, thread 1: exit)", kflow);
		if (kaslr) {   /* the text moves, modules stay */
			uint64_t lo = g->kim.text_vaddr, hi = lo + g->kim.text_size;
			for (int t = 0; t < kf.nth; t++)
				for (size_t i = 0; i < kf.th[t].n; i++)
					if (kf.th[t].ip[i] >= lo && kf.th[t].ip[i] < hi)
						kf.th[t].ip[i] += kaslr;
			image_relocate(&g->kim, kaslr);
		}
		g->im.next = &g->kim;
		g->cfg.kernel = 1;
		splice_kernel(g, &kf);
		flow_free(&kf);
	}
	truth_init(g);
}

static void load(struct gen *g, const char *prog, const char *flowpath, const char *name)
{
	load_kernel(g, prog, flowpath, name, NULL, NULL);
}

static void gen_free(struct gen *g)
{
	for (int t = 0; t < PTGEN_MAX_THREADS; t++) {
		free(g->tr.flags[t]);
		free(g->tr.tsc[t]);
	}
	flow_free(&g->fl);
	image_close(&g->im);
	image_close(&g->kim);
}

/* Flow file @out of program @prog (named by its basename). */
static void write_flow_file(const struct flow *f, struct image *im, const char *prog, const char *out)
{
	FILE *o = fopen(out, "w");
	if (!o)
		die(2, "cannot write %s", out);
	const char *base = strrchr(prog, '/');
	flow_write(f, im, base ? base + 1 : prog, o);
	if (fclose(o) != 0)
		die(2, "cannot write %s", out);
}

static int cmd_trace(int argc, char **argv)
{
	if (argc != 4)
		return 1;
	struct image im;
	struct flow f;
	char err[512];
	open_image(&im, argv[2]);
	/* PTWRITE may not exist on this CPU: a copy with NOPs in their place runs the same flow */
	char runnable[1024];
	const char *tmp = getenv("TMPDIR");
	snprintf(runnable, sizeof(runnable), "%s/ptgen-run.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	int nptw = image_runnable_copy(&im, runnable, err, sizeof(err));
	if (nptw < 0)
		die(2, "%s", err);
	int trc = trace_program(nptw ? runnable : argv[2], &f, err, sizeof(err));
	if (nptw)
		unlink(runnable);
	if (trc < 0) {
		fprintf(stderr, "ptgen: %s\n", err);
		return 3;
	}
	write_flow_file(&f, &im, argv[2], argv[3]);
	for (int t = 0; t < f.nth; t++)
		fprintf(stderr, "ptgen: %s thread %d: %zu instructions\n", argv[2], t, f.th[t].n);
	flow_free(&f);
	image_close(&im);
	return 0;
}

/* Trailing options from argv[@from]: --times, --kernel KIMG KFLOW, --as PATH. 0, or -1 if malformed. */
static int tail_opts(int argc, char **argv, int from, int *times, const char **kimg, const char **kflow)
{
	*kimg = *kflow = NULL;
	if (times)
		*times = 0;
	for (int i = from; i < argc; i++) {
		if (times && !strcmp(argv[i], "--times")) {
			*times = 1;
		} else if (times && !strcmp(argv[i], "--as") && i + 1 < argc) {
			recorded_as = argv[++i];
		} else if (!strcmp(argv[i], "--kaslr") && i + 1 < argc) {
			char *end;
			kaslr = strtoull(argv[++i], &end, 0);
			if (*end || kaslr % 0x200000)
				return -1;     /* KASLR moves the kernel by 2 MiB steps */
		} else if (!strcmp(argv[i], "--kernel") && i + 2 < argc) {
			*kimg = argv[++i];
			*kflow = argv[++i];
		} else {
			return -1;
		}
	}
	return 0;
}

static int cmd_ktrace(int argc, char **argv)
{
	if (argc != 4)
		return 1;
	struct image im;
	struct flow f;
	char err[512];
	memset(&f, 0, sizeof(f));
	open_image(&im, argv[2]);
	static const uint64_t nr[2] = { 1 /* write */, 231 /* exit_group */ };
	for (int t = 0; t < 2; t++) {
		if (trace_kernel(&im, im.entry, nr[t], &f.th[t], err, sizeof(err)) < 0) {
			fprintf(stderr, "ptgen: %s\n", err);
			flow_free(&f);
			image_close(&im);
			return 3;
		}
		f.nth++;
	}
	write_flow_file(&f, &im, argv[2], argv[3]);
	flow_free(&f);
	image_close(&im);
	return 0;
}

/*
 * A kcore-like file (what perf record --kcore copies into kcore_dir/kcore):
 * ET_CORE, a PT_LOAD of 4 KiB of zeros standing for the direct map first,
 * then the kernel's text as a PT_LOAD at file offset 0x3000 (vmlinux has it
 * elsewhere, and the kernel map's pgoff is an address, not an offset), then
 * each module's text in a PT_LOAD of its own.
 */
static int cmd_kcore(int argc, char **argv)
{
	if (argc != 4)
		return 1;
	struct image im;
	open_image(&im, argv[2]);
	enum { DMAP_OFF = 0x1000, TEXT_OFF = 0x3000, MAXSEG = 8 };
	Elf64_Phdr ph[MAXSEG];
	memset(ph, 0, sizeof(ph));
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = DMAP_OFF,
			      .p_vaddr = 0xffff888000000000ull, .p_filesz = 0x1000, .p_memsz = 0x1000, .p_align = 0x1000 };
	int n = 1;
	uint64_t off = TEXT_OFF;
	for (const struct image *s = &im; s && n < MAXSEG; s = s->next, n++) {   /* text, then modules */
		ph[n] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_offset = off,
				      .p_vaddr = s->text_vaddr, .p_filesz = s->text_size, .p_memsz = s->text_size,
				      .p_align = 0x1000 };
		off = (off + s->text_size + 0xfff) & ~0xfffull;
	}
	size_t size = (size_t)ph[n - 1].p_offset + (size_t)ph[n - 1].p_filesz;
	uint8_t *f = calloc(1, size);
	if (!f)
		die(4, "%s", "out of memory");
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)n;
	memcpy(f, &eh, sizeof(eh));
	memcpy(f + sizeof(eh), ph, (size_t)n * sizeof(ph[0]));
	int k = 1;
	for (const struct image *s = &im; s && k < n; s = s->next, k++)
		memcpy(f + ph[k].p_offset, s->file + s->text_offset, s->text_size);
	FILE *o = fopen(argv[3], "wb");
	if (!o || fwrite(f, 1, size, o) != size || fclose(o) != 0)
		die(2, "cannot write %s", argv[3]);
	free(f);
	image_close(&im);
	return 0;
}

static int cmd_fixture(int argc, char **argv)
{
	int times;
	const char *kimg, *kflow;
	if (argc < 7 || tail_opts(argc, argv, 7, &times, &kimg, &kflow) < 0)
		return 1;
	const struct variant *v = find_variant(argv[2]);
	if (!v)
		die(1, "unknown variant %s", argv[2]);
	struct gen g;
	load_kernel(&g, argv[3], argv[4], argv[5], kimg, kflow);
	mkdir(argv[6], 0755);
	v->run(&g, argv[6]);
	write_expected(&g, argv[6], v->name, v->desc, times);
	gen_free(&g);
	return 0;
}

static int cmd_insns(int argc, char **argv)
{
	const char *kimg, *kflow;
	if (argc < 6 || tail_opts(argc, argv, 6, NULL, &kimg, &kflow) < 0)
		return 1;
	struct gen g;
	load_kernel(&g, argv[2], argv[3], "x", kimg, kflow);
	int t = atoi(argv[5]);
	FILE *e = fopen(argv[4], "r");
	if (!e)
		die(2, "cannot read %s", argv[4]);
	char line[256];
	/* the visible ranges, in flow order */
	uint8_t *show = calloc(g.fl.th[t < PTGEN_MAX_THREADS && t >= 0 ? t : 0].n + 1, 1);
	while (fgets(line, sizeof(line), e)) {
		int tt;
		size_t first, count;
		if (sscanf(line, "visible %d %zu %zu", &tt, &first, &count) != 3 || tt != t)
			continue;
		if (tt >= g.fl.nth || first + count > g.fl.th[tt].n)
			die(2, "%s: visible range outside the flow", argv[4]);
		memset(show + first, 1, count);
	}
	for (size_t i = 0; t >= 0 && t < g.fl.nth && i < g.fl.th[t].n; i++)
		if (show[i])
			printf("%" PRIx64 "\n", g.fl.th[t].ip[i]);
	free(show);
	fclose(e);
	gen_free(&g);
	return 0;
}


/* ------------------------------------------------------------ large mode */

/*
 * A benchmark trace: the full-trace episode of one program run (exactly the
 * bytes of the 'full' variant, which tests/ptgen.test checks against perf),
 * repeated. Repetition r is shifted in time by r * P TSC ticks, P a multiple
 * of the MTC wrap (256 MTC periods), so only the TSC and TMA packets change;
 * MTC payloads and CYC counts are the same in every repetition. One
 * repetition ends with TIP.PGD (exit_group) and the next starts with PSB+
 * and TIP.PGE at the entry point, which is valid Intel PT (as if the task
 * re-entered its entry point from the kernel). With CPUS > 1 each CPU runs
 * another thread of the process through the same repetitions. As one
 * thread never returns from its entry point, each repetition nests in the
 * calls of the one before (its call paths grow with the trace, in perf's
 * thread stack as in ours: a call tree no real program has, as deep as the
 * trace is long); with "threads" each repetition runs in a new
 * thread instead (the old one exits and is switched out, a new one is forked and switched in
 * before the PSB), as a program that starts short-lived threads: its call
 * paths stay those of one run. With "exec", each CPU runs a process of its
 * own (the first CPU's the first process, the others forked from it), and
 * each repetition after the first is the same thread exec'ing the program
 * again (COMM with COMM_EXEC, then the program's MMAP2, before the PSB), as a
 * long-running process that re-executes itself: one thread per CPU, and
 * since an exec ends every call of the main thread (perf's thread stack is
 * flushed when the main thread's comm changes, and ours), the call paths stay one
 * run's. With "late", the program's MMAP2 is written
 * again after the second round, dated before the first: a map-changing
 * record that comes out of order (a reader's ordering queue has released
 * records later than it).
 */
static void patch_timing(struct gen *g, uint8_t *ep, const struct ptstream *s, uint64_t shift)
{
	for (size_t k = 0; k < s->ntiming; k++) {
		uint8_t *p = ep + s->timing[k];
		if (p[0] == 0x19) {                         /* TSC: 7 bytes, little endian */
			uint64_t tsc = 0;
			for (int b = 0; b < 7; b++)
				tsc |= (uint64_t)p[1 + b] << (8 * b);
			tsc = (tsc + shift) & ((1ull << 56) - 1);
			for (int b = 0; b < 7; b++)
				p[1 + b] = (uint8_t)(tsc >> (8 * b));
		} else if (p[0] == 0x02 && p[1] == 0x73) {  /* TMA: CTC[15:0] moves by shift / ratio */
			uint16_t ctc = (uint16_t)(p[2] | p[3] << 8);
			ctc = (uint16_t)(ctc + shift / g->cfg.ctc_ratio);
			p[2] = (uint8_t)ctc;
			p[3] = (uint8_t)(ctc >> 8);
		} else {
			die(4, "%s", "timing packet offset does not hold a TSC or TMA");
		}
	}
}

static int cmd_large(int argc, char **argv)
{
	if (argc < 6 || argc > 8 ||
	    (argc == 8 && strcmp(argv[7], "threads") && strcmp(argv[7], "exec") && strcmp(argv[7], "late")))
		return 1;
	int new_threads = argc == 8 && !strcmp(argv[7], "threads");
	int exec = argc == 8 && !strcmp(argv[7], "exec");
	int late = argc == 8 && !strcmp(argv[7], "late");
	struct gen g;
	load(&g, argv[2], argv[3], "loops");
	const char *slash = strrchr(argv[2], '/');
	g.name = slash ? slash + 1 : argv[2];
	snprintf(g.recname, sizeof(g.recname), "/rbfix/%s", g.name);
	double mb = atof(argv[4]);
	int ncpus = argc >= 7 ? atoi(argv[6]) : 1;
	if (mb <= 0 || ncpus < 1 || ncpus > 8)
		die(1, "%s", "large: MB must be > 0 and CPUS 1..8");
	if (g.fl.nth != 1)
		die(2, "%s: large mode repeats a one-thread program", g.name);

	struct ptstream s;
	if (ps_init(&s, &g.cfg, START_TSC) < 0)
		die(4, "%s", "libipt: cannot allocate an encoder");
	s.track_timing = 1;
	ps_psb(&s);
	ps_idle(&s, 1000);
	enable_at(&g, &s, 0, 0);
	run_span(&g, &s, 0, 0, g.fl.th[0].n, NULL, NULL);
	ps_pad(&s);
	uint64_t wrap = (256ull << g.cfg.mtc_period) * g.cfg.ctc_ratio;
	uint64_t period = ((s.tsc - START_TSC + 2000) / wrap + 1) * wrap;
	size_t total = (size_t)(mb * 1048576.0 / ncpus);
	uint64_t reps = total / s.len + 1;
	size_t per_chunk = (1u << 20) / s.len + 1;      /* about 1 MB per AUXTRACE record */

	struct wrap_cfg wc = { .pt = &g.cfg, .ncpus = ncpus, .have_sched_switch = 2 };
	wc.img[0] = &g.im;
	wc.img_name[0] = g.recname;
	struct wrap *w;
	if (wrap_open(&w, argv[5], &wc) < 0)
		exit(4);
	/* CPU c runs thread tid[c] of process pid[c]: threads of one process, or with exec a process each */
	uint32_t pid[8], tid[8];
	for (int c = 0; c < ncpus; c++) {
		tid[c] = PID + (unsigned)c;
		pid[c] = exec ? tid[c] : PID;
	}
	process_start(&g, w, START_TSC);
	for (int c = 1; c < ncpus; c++) {
		wrap_fork(w, 0, START_TSC + 500, pid[c], tid[c], PID, 0);
		wrap_itrace_start(w, c, START_TSC + 600, pid[c], tid[c]);
		wrap_switch(w, c, START_TSC + 700, pid[c], tid[c], 0);
	}
	uint8_t *chunk = malloc(per_chunk * s.len);
	if (!chunk)
		die(4, "%s", "out of memory");
	uint64_t end_tsc = START_TSC + reps * period;
	/*
	 * A chunk of each CPU in turn, then a FINISHED_ROUND, as perf record
	 * writes what one pass over the mmaps found: every round's records are
	 * later than the round's before, so a reader's ordering queue holds
	 * about one round, not the recording.
	 */
	uint64_t off[8] = { 0 };
	for (uint64_t r0 = 0; r0 < reps; r0 += per_chunk) {
		for (int c = 0; c < ncpus; c++) {
			size_t k = 0;
			for (uint64_t r = r0; k < per_chunk && r < reps; k++, r++) {
				memcpy(chunk + k * s.len, s.buf, s.len);
				patch_timing(&g, chunk + k * s.len, &s, r * period);
				if (new_threads && r) {   /* the previous repetition ended 2000 ticks or more before */
					uint64_t t = START_TSC + r * period;
					uint32_t next = PID + (unsigned)c + (uint32_t)(r * (uint64_t)ncpus);
					/* as the kernel does: EXIT from do_exit, then the last switch out */
					wrap_fork(w, c, t - 500, PID, tid[c], PID, 1);
					wrap_switch(w, c, t - 400, PID, tid[c], 1);
					wrap_fork(w, c, t + 100, PID, next, PID, 0);
					wrap_itrace_start(w, c, t + 300, PID, next);
					wrap_switch(w, c, t + 400, PID, next, 0);
					tid[c] = next;
				} else if (exec && r) {   /* as the kernel does: the new comm, then the new image's maps */
					uint64_t t = START_TSC + r * period;
					wrap_comm(w, c, t - 300, pid[c], tid[c], g.name, 1);
					wrap_mmap2(w, c, t - 200, pid[c], tid[c], &g.im, g.recname);
				}
			}
			uint64_t tsc = START_TSC + (r0 + k) * period;
			wrap_aux(w, c, tsc, pid[c], tid[c], off[c], k * s.len, 0);
			wrap_auxtrace(w, c, tsc, tid[c], off[c], chunk, k * s.len);
			off[c] += k * s.len;
		}
		wrap_round(w);
		if (late && r0 == per_chunk)      /* the program's map again, dated before the rounds already written */
			wrap_mmap2(w, 0, START_TSC + 250, PID, PID, &g.im, g.recname);
	}
	for (int c = 0; c < ncpus; c++) {
		wrap_fork(w, c, end_tsc, pid[c], tid[c], PID, 1);
		wrap_switch(w, c, end_tsc + 100, pid[c], tid[c], 1);
	}
	free(chunk);
	wrap_round(w);
	if (late && reps <= 2 * per_chunk)
		die(1, "%s", "large: late needs three rounds (3 MB of trace per CPU)");
	if (wrap_close(w) < 0)
		exit(4);
	size_t branches = count_branches(&g, 0);
	printf("# ptgen large: %s, %" PRIu64 " repetitions of %zu trace bytes per CPU\n", g.name, reps, s.len);
	for (int c = 0; c < ncpus; c++)
		printf("thread %d pid %u tid %u insns %" PRIu64 " branches %" PRIu64 "\n", c, pid[c], PID + (unsigned)c,
		       reps * g.fl.th[0].n, reps * branches);
	printf("trace-bytes %" PRIu64 "\n", reps * s.len * (uint64_t)ncpus);
	ps_free(&s);
	gen_free(&g);
	return 0;
}

/* ------------------------------------------------------------ remap mode */

/*
 * A library loaded where another was, or JIT code placed over freed code:
 * PROG1 runs (tracing stops at its last system call), then PROG2's text is
 * mapped over the same addresses (an MMAP2, no exec: the same process and
 * comm), and the thread runs PROG2's flow from its first instruction. A
 * decoder must read the second run's code from PROG2, as perf does (it
 * reads code through the maps as they are at each branch). With "pid-reuse"
 * the process exits instead, and a process running PROG2 (never traced)
 * forks a child that gets the same pid and runs PROG2's flow: a new process
 * whose maps are its parent's, whatever the old one with that pid had.
 * Both programs are recorded as /rbfix/NAME; counts on stdout.
 */
static int cmd_remap(int argc, char **argv)
{
	if (argc != 7 && !(argc == 8 && !strcmp(argv[7], "pid-reuse")))
		return 1;
	int reuse = argc == 8;
	struct gen g1, g2;
	const char *n1 = strrchr(argv[2], '/'), *n2 = strrchr(argv[4], '/');
	load(&g1, argv[2], argv[3], n1 ? n1 + 1 : argv[2]);
	load(&g2, argv[4], argv[5], n2 ? n2 + 1 : argv[4]);
	if (g1.fl.nth != 1 || g2.fl.nth != 1)
		die(2, "%s", "remap: two one-thread programs");
	uint64_t a1 = g1.im.text_vaddr & ~0xfffull, a2 = g2.im.text_vaddr & ~0xfffull;
	if (a1 != a2)
		die(2, "remap: %s's text is at %#" PRIx64 ", %s's at %#" PRIx64 ": not over each other", g1.name, a1,
		    g2.name, a2);
	struct wrap_cfg wc = { .pt = &g1.cfg, .ncpus = 1, .have_sched_switch = 2 };
	wc.img[0] = &g1.im;
	wc.img_name[0] = g1.recname;
	wc.img[1] = &g2.im;
	wc.img_name[1] = g2.recname;
	struct wrap *w;
	if (wrap_open(&w, argv[6], &wc) < 0)
		exit(4);
	struct ptstream s;
	process_start(&g1, w, START_TSC);
	stream_init(&g1, &s, 600);
	enable_at(&g1, &s, 0, 0);
	run_span(&g1, &s, 0, 0, g1.fl.th[0].n, NULL, NULL);
	ps_idle(&s, 2000);
	if (reuse) {    /* the process exits; another (pid PID + 100) runs PROG2 and forks a child given pid PID */
		uint32_t parent = PID + 100;
		wrap_switch(w, 0, s.tsc, PID, PID, 1);
		wrap_fork(w, 0, s.tsc + 10, PID, PID, PID, 1);
		wrap_comm(w, 0, s.tsc + 20, parent, parent, g2.name, 1);
		wrap_mmap2(w, 0, s.tsc + 30, parent, parent, &g2.im, g2.recname);
		wrap_fork(w, 0, s.tsc + 40, PID, PID, parent, 0);
		wrap_itrace_start(w, 0, s.tsc + 50, PID, PID);
		wrap_switch(w, 0, s.tsc + 60, PID, PID, 0);
	} else {
		wrap_mmap2(w, 0, s.tsc, PID, PID, &g2.im, g2.recname);
	}
	ps_idle(&s, 2000);
	ps_psb(&s);
	ps_idle(&s, 1000);
	enable_at(&g2, &s, 0, 0);
	run_span(&g2, &s, 0, 0, g2.fl.th[0].n, NULL, NULL);
	size_t b1 = count_branches(&g1, 0), b2 = count_branches(&g2, 0);
	finish_single(&g1, w, &s, 0);
	printf("# ptgen remap: %s, then %s %s at %#" PRIx64 "\n", g1.name, g2.name,
	       reuse ? "in a new process with the same pid" : "mapped over it", a1);
	printf("run 1 %s branches %zu\nrun 2 %s branches %zu\n", g1.name, b1, g2.name, b2);
	gen_free(&g1);
	gen_free(&g2);
	return 0;
}

static int cmd_ipt(int argc, char **argv)
{
	if (argc != 5)
		return 1;
	struct image im;
	open_image(&im, argv[3]);
	int rc = ipt_decode(argv[2], &im, atoi(argv[4]), stdout);
	image_close(&im);
	return rc < 0 ? 2 : rc ? 5 : 0;   /* 5: decoded, with errors */
}

int main(int argc, char **argv)
{
	int rc = 1;
	if (argc >= 2 && !strcmp(argv[1], "trace"))
		rc = cmd_trace(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "fixture"))
		rc = cmd_fixture(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "insns"))
		rc = cmd_insns(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "ipt"))
		rc = cmd_ipt(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "large"))
		rc = cmd_large(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "remap"))
		rc = cmd_remap(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "ktrace"))
		rc = cmd_ktrace(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "kcore"))
		rc = cmd_kcore(argc, argv);
	if (rc == 1)
		fprintf(stderr, "usage: ptgen trace PROG FLOW | ktrace KIMG KFLOW |"
				" fixture VARIANT PROG FLOW NAME OUTDIR [--times] [--kernel KIMG KFLOW] [--as PATH] [--kaslr DELTA] |"
				" insns PROG FLOW EXPECTED THREAD [--kernel KIMG KFLOW [--kaslr DELTA]] | ipt PERFDATA PROG QUEUE |"
				" large PROG FLOW MB OUT [CPUS [threads|exec|late]] | kcore KIMG OUT |"
				" remap PROG1 FLOW1 PROG2 FLOW2 OUT [pid-reuse]\n");
	return rc;
}
