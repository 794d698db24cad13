/*
 * fuzz_trace.c - libFuzzer targets for the hardware-trace decoders inside a
 * valid recording: the input is the payload of one AUXTRACE record of a
 * real recording whose binary is at hand, so every input reaches the trace
 * decoder with its sideband, images and symbols in place, and the session
 * in-process (no command line, no file per input: the recording is a memfd).
 *   fuzz_trace_pt  Intel PT packets, in tests/fixtures/intel-pt-gen's
 *                  loops-full recording (the loops binary in its symfs)
 *   fuzz_trace_cs  CoreSight trace, in $RB_FIXTURES/coresight-perf's
 *                  perf_etm.data (etm_test_loop where it was recorded)
 * The input replaces the recording's largest AUXTRACE payload, cut or
 * padded with zeros to its size (so the AUX records keep pointing into it).
 * Every event goes to a sink that checks the sink contract (session.h):
 * begin first and once, end last and once, samples and context switches
 * in time order, and every object an event points to readable (ASan finds
 * what is not).
 * Seeds: each fixture's AUX payloads (seeds.sh).
 */
#include "config.h"
#include <limits.h>
#include "fuzz.h"
#include "decoder/session/session.h"
#include "decoder/session/machine.h"
#include "decoder/session/symtab.h"

#if defined(FUZZ_TRACE_PT)
#define TEMPLATE_DIR "tests/fixtures/intel-pt-gen"
#define TEMPLATE "loops-full/perf.data"
#elif defined(FUZZ_TRACE_CS)
#define TEMPLATE "perf_etm.data"
#else
#error "build with -DFUZZ_TRACE_PT or -DFUZZ_TRACE_CS"
#endif

static uint8_t *tmpl;                 /* the recording */
static size_t tmpl_len, pay_off, pay_len;   /* and the payload the input replaces */
static uint8_t *buf;
static char symfs[512];

/* last time per stream: samples, context switches */
enum { S_SAMPLE, S_SWITCH, NR_STREAMS };
struct check { int begun, ended; uint64_t last[NR_STREAMS]; size_t touched; };

static void die(const char *what)
{
	fprintf(stderr, "fuzz_trace: %s\n", what);
	abort();
}

static void touch(struct check *c, const char *s)
{
	if (s)
		c->touched += strlen(s);
}

static void touch_loc(struct check *c, const struct rb_addr_loc *al)
{
	if (al->dso)
		touch(c, al->dso->long_name);
	if (al->sym)
		touch(c, al->sym->name);
}

static void touch_thread(struct check *c, const struct rb_thread *t, const struct rb_comm *comm)
{
	if (t && t->comm)
		touch(c, t->comm->name);
	if (comm)
		touch(c, comm->name);
}

/*
 * Samples and context switches come in time order, each. (A trace event
 * may be dated a little before a sideband record delivered first: its time
 * comes from the timing packets before the packet that proves it, as perf
 * dates it; and a damaged trace whose TSC goes back dates its events back.)
 */
static void in_order(struct check *c, int stream, uint64_t t, const char *what)
{
	if (!c->begun || c->ended)
		die("an event outside begin .. end");
	if (stream >= NR_STREAMS)
		return;
	if (t && t < c->last[stream]) {
		fprintf(stderr, "fuzz_trace: %s at %llu after one at %llu\n", what,
			(unsigned long long)t, (unsigned long long)c->last[stream]);
		abort();
	}
	if (t)
		c->last[stream] = t;
}

static int on_begin(void *ctx, struct rb_machine *m)
{
	struct check *c = ctx;
	if (c->begun || !m)
		die("begin twice or without a machine");
	c->begun = 1;
	return 0;
}

static int on_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct check *c = ctx;
	in_order(c, S_SAMPLE, ev->time, "a sample");
	touch_thread(c, ev->thread, ev->comm);
	touch_loc(c, &ev->al);
	return 0;
}

static int on_trace(void *ctx, const struct rb_trace_ev *ev)
{
	struct check *c = ctx;
	/* (not in order: a damaged trace whose TSC goes back dates its events back; see doc/faults.md) */
	if (!c->begun || c->ended)
		die("a trace event outside begin .. end");
	touch(c, ev->source);
	touch(c, ev->mods);
	touch_thread(c, ev->thread, ev->comm);
	touch_loc(c, &ev->from_al);
	touch_loc(c, &ev->to_al);
	return 0;
}

static int on_gap(void *ctx, const struct rb_gap_ev *ev)
{
	struct check *c = ctx;
	if (!c->begun || c->ended)
		die("a gap outside begin .. end");
	touch(c, ev->reason);
	touch(c, ev->source);
	touch(c, ev->detail);
	if (ev->time_end && ev->time_start > ev->time_end)
		die("a gap that ends before it starts");
	return 0;
}

static int on_switch(void *ctx, const struct rb_switch_ev *ev)
{
	in_order(ctx, S_SWITCH, ev->time, "a context switch");
	return 0;
}

static int on_sync(void *ctx, const struct rb_sync_ev *ev)
{
	struct check *c = ctx;
	if (!c->begun || c->ended)
		die("a sync point outside begin .. end");
	touch(c, ev->source);
	return 0;
}

static int on_end(void *ctx)
{
	struct check *c = ctx;
	if (!c->begun || c->ended)
		die("end without begin, or twice");
	c->ended = 1;
	return 0;
}

static void quiet(void *ctx, const struct pd_error *w)
{
	(void)ctx, (void)w;
}

/* The payload of the largest AUXTRACE record (type 71) of a native-endian perf.data. */
static void find_payload(void)
{
	uint64_t data_off, data_size;
	if (tmpl_len < 104 || memcmp(tmpl, "PERFILE2", 8))
		die("the template is not a native perf.data");
	memcpy(&data_off, tmpl + 40, 8);
	memcpy(&data_size, tmpl + 48, 8);
	uint64_t end = data_off + data_size, at = data_off;
	if (end > tmpl_len)
		die("the template is cut");
	while (at + 8 <= end) {
		uint32_t type;
		uint16_t size;
		memcpy(&type, tmpl + at, 4);
		memcpy(&size, tmpl + at + 6, 2);
		if (size < 8)
			die("a template record of size < 8");
		uint64_t extra = 0;
		if (type == 71 && at + 16 <= end) {
			memcpy(&extra, tmpl + at + 8, 8);
			if (extra > pay_len) {
				pay_off = at + size;
				pay_len = extra;
			}
		}
		at += size + extra;
	}
	if (!pay_len)
		die("no AUXTRACE payload in the template");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char path[512];
	const char *s = fuzz_scratch();
#if defined(FUZZ_TRACE_PT)
	const char *top = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
	snprintf(symfs, sizeof(symfs), "%s/" TEMPLATE_DIR, top);
	snprintf(path, sizeof(path), "%s/" TEMPLATE, symfs);
#else
	const char *fx = getenv("RB_FIXTURES") ? getenv("RB_FIXTURES") : "../shared/fixtures";
	char bin[512], dir[512];
	snprintf(path, sizeof(path), "%s/coresight-perf/" TEMPLATE, fx);
	snprintf(bin, sizeof(bin), "%s/coresight-perf/etm_test_loop", fx);
	snprintf(symfs, sizeof(symfs), "%s/symfs", s);
	snprintf(dir, sizeof(dir), "%s/symfs/data", s), mkdir(symfs, 0700), mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/symfs/data/local", s), mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/symfs/data/local/tmp", s), mkdir(dir, 0700);
	char link[600], real[PATH_MAX];
	snprintf(link, sizeof(link), "%s/etm_test_loop", dir);
	if (!realpath(bin, real) || symlink(real, link) < 0)
		die("no etm_test_loop beside perf_etm.data (set RB_FIXTURES)");
#endif
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz_trace: cannot open the template %s (set top_srcdir / RB_FIXTURES)\n", path);
		abort();
	}
	fseek(f, 0, SEEK_END);
	tmpl_len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	tmpl = malloc(tmpl_len);
	buf = malloc(tmpl_len);
	if (!tmpl || !buf || fread(tmpl, 1, tmpl_len, f) != tmpl_len)
		die("cannot read the template");
	fclose(f);
	find_payload();
	char home[600], tmp[600];
	snprintf(home, sizeof(home), "%s/home", s), mkdir(home, 0700);
	snprintf(tmp, sizeof(tmp), "%s/tmp", s), mkdir(tmp, 0700);
	setenv("HOME", home, 1);     /* no build-id cache of this machine's */
	setenv("TMPDIR", tmp, 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memcpy(buf, tmpl, tmpl_len);
	size_t n = size < pay_len ? size : (size_t)pay_len;
	memcpy(buf + pay_off, data, n);
	memset(buf + pay_off + n, 0, pay_len - n);
	int fd = fuzz_memfd(buf, tmpl_len);
	if (fd < 0)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	struct rb_session_opts o = { 0 };
	o.path = path;
	o.machine.symfs = symfs;
	o.perf_export = 1;
	o.jobs = 1;
	o.warn = quiet;
	struct check c = { 0 };
	struct rb_sink sink = {
		.ctx = &c, .begin = on_begin, .sample = on_sample, .context_switch = on_switch, .gap = on_gap,
		.trace = on_trace, .sync_point = on_sync, .end = on_end,
	};
	struct rb_session_stats st;
	struct pd_error err;
	int rc = rb_session_run(&o, &sink, &st, &err);
	if (c.begun && !c.ended)
		die("begin without end");
	(void)rc;
	close(fd);
	return 0;
}
