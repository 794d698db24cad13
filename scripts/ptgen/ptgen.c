/*
 * ptgen - Intel PT perf.data fixtures with ground truth, made without PT
 * hardware (issue 5; fixture format in tests/fixtures/intel-pt-gen/README.md).
 *
 *   ptgen trace PROG FLOW            single-step PROG (ptrace), write its flow file
 *   ptgen fixture VARIANT PROG FLOW NAME OUTDIR
 *                                    OUTDIR/perf.data + OUTDIR/expected.txt +
 *                                    OUTDIR/branches-T.txt for one variant
 *   ptgen insns PROG FLOW EXPECTED T print the instruction addresses of thread T
 *                                    that a decoder recovers (visible ranges)
 *   ptgen large PROG FLOW MB OUT     a benchmark perf.data of about MB megabytes
 *
 * Exit status: 0 done, 1 bad command line, 2 input unreadable, 3 ptrace
 * refused (the caller may skip), 4 internal failure.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ptgen.h"

#define START_TSC 2400000000000ull    /* perf time 1000 s */
#define PID 4242u

struct gen {
	struct image im;
	struct flow fl;
	struct truth tr;
	struct ptcfg cfg;
	const char *name;     /* recorded comm and file name /rbfix/<name> */
	char recname[128];
};

static void die(int code, const char *fmt, const char *a)
{
	fprintf(stderr, "ptgen: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(code);
}

static void insn_at(struct gen *g, uint64_t ip, struct insn *in)
{
	if (image_insn(&g->im, ip, in) < 0) {
		char b[64];
		snprintf(b, sizeof(b), "%" PRIx64, ip);
		die(2, "flow address 0x%s is not a decodable instruction of the program", b);
	}
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
		if (fl[i] & TF_ASYNC) {
			fprintf(out, "%" PRIx64 " 0 tr_end_async\n", th->ip[i]);
			nb++;
		}
		if (fl[i] & TF_BEGIN) {
			fprintf(out, "0 %" PRIx64 " tr_strt\n", th->ip[i]);
			nb++;
		}
		struct insn in;
		insn_at(g, th->ip[i], &in);
		const char *k = branch_kind(in.kind);
		if (!k)
			continue;
		if (in.kind == IK_SYSCALL) {
			fprintf(out, "%" PRIx64 " 0 tr_end_syscall\n", th->ip[i]);
			nb++;
			continue;
		}
		if (i + 1 >= th->n)
			continue;
		if (in.kind == IK_JCC && th->ip[i + 1] == th->ip[i] + in.size)
			continue;
		fprintf(out, "%" PRIx64 " %" PRIx64 " %s\n", th->ip[i], th->ip[i + 1], k);
		nb++;
	}
	return nb;
}

static void write_expected(struct gen *g, const char *dir, const char *variant, const char *desc)
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
	for (int k = 0; k < g->tr.ngaps; k++) {
		const struct gap *gp = &g->tr.gaps[k];
		const struct thread_flow *th = &g->fl.th[gp->thread];
		fprintf(e, "gap %d %zu %zu %" PRIx64 " %" PRIx64 " %s\n", gp->thread, gp->first, gp->count,
			th->ip[gp->first], th->ip[gp->first + gp->count - 1], gp->reason);
	}
	fclose(e);
}

/* ---------------------------------------------------------------- drivers */

static void truth_init(struct gen *g)
{
	for (int t = 0; t < g->fl.nth; t++) {
		g->tr.flags[t] = calloc(g->fl.th[t].n + 1, 1);
		for (size_t i = 0; i < g->fl.th[t].n; i++)
			g->tr.flags[t][i] = TF_VISIBLE;
	}
}

static void add_gap(struct gen *g, int t, size_t first, size_t count, const char *reason)
{
	if (g->tr.ngaps >= (int)(sizeof(g->tr.gaps) / sizeof(g->tr.gaps[0])))
		die(4, "%s", "too many gaps");
	g->tr.gaps[g->tr.ngaps++] = (struct gap){ t, first, count, reason };
	for (size_t i = first; i < first + count; i++)
		g->tr.flags[t][i] &= (uint8_t)~TF_VISIBLE;
	g->tr.flags[t][first + count] |= TF_LOSS;
}

/*
 * Run thread @t's instructions [from, to) on stream @s. Each system call's
 * return re-enables tracing (unless it is the span's last instruction).
 * @hook, when set, is called before each instruction (variants inject events).
 */
typedef void (*insn_hook)(struct gen *g, struct ptstream *s, int t, size_t i, void *ctx);

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
		ps_insn(s, &in, next);
		if (in.kind == IK_SYSCALL && i + 1 < to) {
			ps_idle(s, g->cfg.syscall_cycles);
			ps_enable(s, next);
			g->tr.flags[t][i + 1] |= TF_BEGIN;
		}
	}
}

/*
 * AUX chunks end where the stream's cut points are (packet boundaries, as the
 * driver's AUX head is when tracing stops), and at the end; each is an AUX
 * record (kernel) and an AUXTRACE record with the bytes padded to 8.
 */
static void write_chunks(struct wrap *w, struct ptstream *s, int cpu, uint32_t tid, uint64_t tsc_end)
{
	size_t off = 0;
	for (int k = 0; k <= s->ncuts; k++) {
		size_t end = k < s->ncuts ? s->cuts[k].offset : s->len;
		uint64_t tsc = k < s->ncuts ? s->cuts[k].tsc : tsc_end;
		if (end <= off)
			continue;
		wrap_aux(w, cpu, tsc, PID, tid, off, end - off, 0);
		wrap_auxtrace(w, cpu, tsc, tid, off, s->buf + off, end - off);
		off = end;
	}
}

static void variant_full(struct gen *g, const char *out)
{
	struct ptstream s;
	if (ps_init(&s, &g->cfg, START_TSC) < 0)
		die(4, "%s", "libipt: cannot allocate an encoder");
	struct wrap_cfg wc = { .pt = &g->cfg, .ncpus = 1, .have_sched_switch = 2 };
	wc.img[0] = &g->im;
	wc.img_name[0] = g->recname;
	struct wrap *w;
	char path[1024];
	snprintf(path, sizeof(path), "%s/perf.data", out);
	if (wrap_open(&w, path, &wc) < 0)
		exit(4);
	uint64_t t0 = START_TSC;
	wrap_comm(w, 0, t0 + 100, PID, PID, g->name, 1);
	wrap_mmap2(w, 0, t0 + 200, PID, PID, &g->im, g->recname);
	wrap_itrace_start(w, 0, t0 + 300, PID, PID);
	wrap_switch(w, 0, t0 + 400, PID, PID, 0);
	s.cut_every = 1600;
	s.next_cut = s.cut_every;
	ps_psb(&s);
	ps_idle(&s, 1000);
	ps_enable(&s, g->fl.th[0].ip[0]);
	g->tr.flags[0][0] |= TF_BEGIN;
	run_span(g, &s, 0, 0, g->fl.th[0].n, NULL, NULL);
	ps_pad(&s);
	uint64_t tend = s.tsc + 500;
	wrap_fork(w, 0, tend, PID, PID, PID, 1);
	write_chunks(w, &s, 0, PID, tend);
	wrap_round(w);
	if (wrap_close(w) < 0)
		exit(4);
	ps_free(&s);
}

struct variant {
	const char *name;
	void (*run)(struct gen *g, const char *out);
	const char *desc;
};

static const struct variant variants[] = {
	{ "full", variant_full, "full trace, one CPU, AUX data in AUXTRACE chunks of about 1600 bytes" },
};

static const struct variant *find_variant(const char *name)
{
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		if (!strcmp(variants[i].name, name))
			return &variants[i];
	return NULL;
}

static void load(struct gen *g, const char *prog, const char *flowpath, const char *name)
{
	char err[512];
	memset(g, 0, sizeof(*g));
	default_cfg(&g->cfg);
	g->name = name;
	snprintf(g->recname, sizeof(g->recname), "/rbfix/%s", name);
	if (image_open(&g->im, prog, err, sizeof(err)) < 0)
		die(2, "%s", err);
	if (flow_read(&g->fl, &g->im, flowpath, err, sizeof(err)) < 0)
		die(2, "%s", err);
	truth_init(g);
}

static int cmd_trace(int argc, char **argv)
{
	if (argc != 4)
		return 1;
	struct image im;
	struct flow f;
	char err[512];
	if (image_open(&im, argv[2], err, sizeof(err)) < 0)
		die(2, "%s", err);
	if (trace_program(argv[2], &f, err, sizeof(err)) < 0) {
		fprintf(stderr, "ptgen: %s\n", err);
		return 3;
	}
	FILE *o = fopen(argv[3], "w");
	if (!o)
		die(2, "cannot write %s", argv[3]);
	const char *base = strrchr(argv[2], '/');
	flow_write(&f, &im, base ? base + 1 : argv[2], o);
	fclose(o);
	for (int t = 0; t < f.nth; t++)
		fprintf(stderr, "ptgen: %s thread %d: %zu instructions\n", argv[2], t, f.th[t].n);
	flow_free(&f);
	image_close(&im);
	return 0;
}

static int cmd_fixture(int argc, char **argv)
{
	if (argc != 7)
		return 1;
	const struct variant *v = find_variant(argv[2]);
	if (!v)
		die(1, "unknown variant %s", argv[2]);
	struct gen g;
	load(&g, argv[3], argv[4], argv[5]);
	mkdir(argv[6], 0755);
	v->run(&g, argv[6]);
	write_expected(&g, argv[6], v->name, v->desc);
	return 0;
}

static int cmd_insns(int argc, char **argv)
{
	if (argc != 6)
		return 1;
	struct gen g;
	load(&g, argv[2], argv[3], "x");
	int t = atoi(argv[5]);
	FILE *e = fopen(argv[4], "r");
	if (!e)
		die(2, "cannot read %s", argv[4]);
	char line[256];
	while (fgets(line, sizeof(line), e)) {
		int tt;
		size_t first, count;
		if (sscanf(line, "visible %d %zu %zu", &tt, &first, &count) != 3 || tt != t)
			continue;
		if (tt >= g.fl.nth || first + count > g.fl.th[tt].n)
			die(2, "%s: visible range outside the flow", argv[4]);
		for (size_t i = first; i < first + count; i++)
			printf("%" PRIx64 "\n", g.fl.th[tt].ip[i]);
	}
	fclose(e);
	return 0;
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
	if (rc == 1)
		fprintf(stderr, "usage: ptgen trace PROG FLOW | fixture VARIANT PROG FLOW NAME OUTDIR |"
				" insns PROG FLOW EXPECTED THREAD | large PROG FLOW MB OUT\n");
	return rc;
}
