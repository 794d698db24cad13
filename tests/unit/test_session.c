/*
 * test_session.c - decoder/session/session.c, the decoding session, on small
 * perf.data recordings written here with the project's writer (in a
 * temporary folder under $TMPDIR, removed at the end) and read back through
 * rb_session_run into a sink that copies every event it is given:
 * kernel records with a time (samples, COMM, MMAP, SWITCH) written out of
 * order within FINISHED_ROUND rounds reach the sink in time order, and the
 * machine sees COMM and MMAP in that order too; a record older than one
 * already released is counted late and still delivered; a sample resolves
 * to its thread, its main thread and the comm perf shows, to a symbol of a
 * real ELF object (this test's own binary), to a map without a symbol in an
 * anonymous or a missing file, to no map outside every mapping; --time and
 * -C (time_start / time_end, cpus "0,2-3") select samples, with every sample
 * counted and those outside the window counted apart, and switches on
 * unselected CPUs are not delivered; a PERF_RECORD_LOST is one "kernel lost
 * records" gap dated from the previous record of its CPU in time order
 * (its own time when there is none), with its count and file offset; a
 * non-zero code from begin, sample, context_switch, gap or end is what
 * rb_session_run returns, nothing is delivered after it and end is called
 * once (its own code does not replace an earlier stop); a recording cut
 * inside a record delivers what came before and says where it stopped in
 * stats.stop while returning 0; a missing file or a bad CPU list is a
 * negative status whose message names it, with no sink callback.
 */
#include "config.h"
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "decoder/session/session.h"
#include "recbuf.h"
#include "tap.h"

static char dir[4096];

/* ---------------------------------------------------------- recordings */

/* One evsel: every record has its thread, time and CPU (sample_id_all trailer). */
#define ST (PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CPU | PD_SAMPLE_PERIOD)

struct rec {
	char path[4200];
	struct pd_writer *w;
	uint64_t off[64];     /* data-section offset of each record written */
	int n;
	int failed;
	uint64_t data_offset; /* where the data section starts in the file (after rec_close) */
};

static void rec_open(struct rec *r, const char *name)
{
	struct pd_writer_opts o;
	struct pd_error err;
	struct pd_event_attr a;
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s/%s", dir, name);
	pd_writer_opts_init(&o);
	if (pd_writer_open(&r->w, r->path, &o, &err) < 0) {
		diag("%s: %s", r->path, err.msg);
		r->failed = 1;
		return;
	}
	memset(&a, 0, sizeof(a));
	a.type = PD_TYPE_SOFTWARE;
	a.size = 128;
	a.sample_period = 1;
	a.sample_type = ST;
	a.flags = pd_attr_flag_mask(PD_ATTR_SAMPLE_ID_ALL) | pd_attr_flag_mask(PD_ATTR_MMAP) |
		  pd_attr_flag_mask(PD_ATTR_COMM) | pd_attr_flag_mask(PD_ATTR_CONTEXT_SWITCH);
	uint64_t id = 1;
	if (pd_writer_add_evsel(r->w, &a, &id, 1, "cpu-clock", &err) < 0) {
		diag("%s: %s", r->path, err.msg);
		r->failed = 1;
	}
}

static void rec_put(struct rec *r, struct recbuf *b)
{
	struct pd_error err;
	end(b);
	if (r->failed || r->n >= 64) {
		r->failed = 1;
		return;
	}
	r->off[r->n++] = pd_writer_data_size(r->w);
	if (pd_writer_write(r->w, b->b, 0, NULL, 0, &err) < 0) {
		diag("%s: %s", r->path, err.msg);
		r->failed = 1;
	}
}

static void trailer(struct recbuf *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	p32(b, pid); p32(b, tid); p64(b, time); p32(b, cpu); p32(b, 0);
}

static void sample(struct rec *r, uint64_t time, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t ip)
{
	struct recbuf b;
	begin(&b, PD_RECORD_SAMPLE, PD_MISC_USER);
	p64(&b, ip); p32(&b, pid); p32(&b, tid); p64(&b, time); p32(&b, cpu); p32(&b, 0); p64(&b, 1);
	rec_put(r, &b);
}

static void comm(struct rec *r, uint64_t time, uint32_t cpu, uint32_t pid, uint32_t tid, const char *name, int exec)
{
	struct recbuf b;
	begin(&b, PD_RECORD_COMM, exec ? PD_MISC_COMM_EXEC : 0);
	p32(&b, pid); p32(&b, tid); pstr(&b, name);
	trailer(&b, pid, tid, time, cpu);
	rec_put(r, &b);
}

static void mmap_rec(struct rec *r, uint64_t time, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     const char *file)
{
	struct recbuf b;
	begin(&b, PD_RECORD_MMAP, PD_MISC_USER);
	p32(&b, pid); p32(&b, pid); p64(&b, start); p64(&b, len); p64(&b, pgoff); pstr(&b, file);
	trailer(&b, pid, pid, time, 0);
	rec_put(r, &b);
}

static void switch_rec(struct rec *r, uint64_t time, uint32_t cpu, uint32_t pid, int out)
{
	struct recbuf b;
	begin(&b, PD_RECORD_SWITCH, out ? PD_MISC_SWITCH_OUT : 0);
	trailer(&b, pid, pid, time, cpu);
	rec_put(r, &b);
}

static void lost(struct rec *r, uint64_t time, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t n)
{
	struct recbuf b;
	begin(&b, PD_RECORD_LOST, 0);
	p64(&b, 1); p64(&b, n);
	trailer(&b, pid, tid, time, cpu);
	rec_put(r, &b);
}

static void round_end(struct rec *r)
{
	struct recbuf b;
	begin(&b, PD_RECORD_FINISHED_ROUND, 0);
	rec_put(r, &b);
}

/* Finish the file and learn where its data section starts (record k is at data_offset + off[k]). */
static int rec_close(struct rec *r)
{
	struct pd_error err;
	struct pd_reader *rd;
	if (r->failed) {
		pd_writer_free(r->w);
		return -1;
	}
	if (pd_writer_close(r->w, &err) < 0 || pd_reader_open(&rd, r->path, NULL, &err) < 0) {
		diag("%s: %s", r->path, err.msg);
		return -1;
	}
	r->data_offset = pd_reader_info(rd)->data_offset;
	pd_reader_free(rd);
	return 0;
}

/* ---------------------------------------------------------- the sink */

struct got_ev {
	char kind;                     /* 'S' sample, 'W' switch, 'G' gap */
	uint64_t time, time_end;
	int32_t cpu, pid, tid;
	int main_tid;                  /* -1: no main thread */
	int out;
	uint64_t ip, addr;
	int has_map;
	char comm[32], thread_comm[32], dso[4200], sym[128];
	uint64_t sym_start, sym_end;
	char reason[64], source[16];
	uint64_t records_lost, file_offset;
};

struct got {
	struct got_ev ev[64];
	int n, samples, switches, gaps;
	int begins, ends, late_calls;  /* late_calls: callbacks after a stop code or after end */
	int stopped, ended;
	/* stop codes: returned by the n-th call (1-based) of that callback; 0: never */
	int stop_sample_at, stop_switch_at, stop_gap_at, code;
	int begin_code, end_code;
};

/* The next event's slot, with what every kind has. */
static struct got_ev *next_ev(struct got *g, char kind, uint64_t time, int32_t cpu, int32_t pid, int32_t tid)
{
	static struct got_ev spare;
	if (g->stopped || g->ended)
		g->late_calls++;
	struct got_ev *e = g->n < 64 ? &g->ev[g->n++] : &spare;
	*e = (struct got_ev){ .kind = kind, .time = time, .cpu = cpu, .pid = pid, .tid = tid };
	return e;
}

static int stop_if(struct got *g, int at, int count)
{
	if (at && count == at) {
		g->stopped = 1;
		return g->code;
	}
	return 0;
}

static int k_begin(void *ctx, struct rb_machine *m)
{
	struct got *g = ctx;
	(void)m;
	g->begins++;
	if (g->begin_code)
		g->stopped = 1;
	return g->begin_code;
}

static int k_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct got *g = ctx;
	struct got_ev *e = next_ev(g, 'S', ev->time, (int32_t)ev->cpu, ev->thread ? ev->thread->pid : -1,
				   ev->thread ? ev->thread->tid : -1);
	e->main_tid = ev->main_thread ? ev->main_thread->tid : -1;
	e->ip = ev->ip;
	e->addr = ev->al.addr;
	e->has_map = ev->al.map != NULL;
	snprintf(e->comm, sizeof(e->comm), "%s", ev->comm ? ev->comm->name : "");
	snprintf(e->thread_comm, sizeof(e->thread_comm), "%s",
		 ev->thread && ev->thread->comm ? ev->thread->comm->name : "");
	snprintf(e->dso, sizeof(e->dso), "%s", ev->al.dso ? ev->al.dso->long_name : "");
	snprintf(e->sym, sizeof(e->sym), "%s", ev->al.sym ? ev->al.sym->name : "");
	if (ev->al.sym) {
		e->sym_start = ev->al.sym->start;
		e->sym_end = ev->al.sym->end;
	}
	return stop_if(g, g->stop_sample_at, ++g->samples);
}

static int k_switch(void *ctx, const struct rb_switch_ev *ev)
{
	struct got *g = ctx;
	next_ev(g, 'W', ev->time, ev->cpu, ev->pid, ev->tid)->out = ev->out;
	return stop_if(g, g->stop_switch_at, ++g->switches);
}

static int k_gap(void *ctx, const struct rb_gap_ev *ev)
{
	struct got *g = ctx;
	struct got_ev *e = next_ev(g, 'G', ev->time_start, ev->cpu, ev->pid, ev->tid);   /* a gap's time: its start */
	e->time_end = ev->time_end;
	snprintf(e->reason, sizeof(e->reason), "%s", ev->reason ? ev->reason : "");
	snprintf(e->source, sizeof(e->source), "%s", ev->source ? ev->source : "");
	e->records_lost = ev->records_lost;
	e->file_offset = ev->file_offset;
	return stop_if(g, g->stop_gap_at, ++g->gaps);
}

static int k_end(void *ctx)
{
	struct got *g = ctx;
	g->ends++;
	g->ended = 1;
	return g->end_code;
}

static int run(const char *path, struct got *g, struct rb_session_stats *st, struct pd_error *err,
	       uint64_t time_start, uint64_t time_end, const char *cpus)
{
	struct rb_session_opts o;
	struct rb_sink k = { .ctx = g, .begin = k_begin, .sample = k_sample, .context_switch = k_switch,
			     .gap = k_gap, .end = k_end };
	memset(&o, 0, sizeof(o));
	o.path = path;
	o.machine.buildid_dir = "/nonexistent";   /* no lookups in the user's build-id cache */
	o.time_start = time_start;
	o.time_end = time_end;
	o.cpus = cpus;
	memset(err, 0, sizeof(*err));
	return rb_session_run(&o, &k, st, err);
}

/* The index of the first event of @kind at @time, or -1. */
static int find(const struct got *g, char kind, uint64_t time)
{
	for (int i = 0; i < g->n && i < 64; i++)
		if (g->ev[i].kind == kind && g->ev[i].time == time)
			return i;
	return -1;
}

/* Whether the events the sink got are exactly @n of (kind, time) @want, in that order. */
static int sequence_is(const struct got *g, const char *kinds, const uint64_t *times, int n)
{
	if (g->n != n) {
		diag("%d events, expected %d", g->n, n);
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (g->ev[i].kind != kinds[i] || g->ev[i].time != times[i]) {
			diag("event %d is %c at %" PRIu64 ", expected %c at %" PRIu64, i, g->ev[i].kind,
			     g->ev[i].time, kinds[i], times[i]);
			return 0;
		}
	return 1;
}

/* ---------------------------------------------------------- 1. time order */

#define ORDER_SO "/nonexistent/order.so"
#define ORDER_IP 0x400100

static int write_order(struct rec *r)
{
	rec_open(r, "order.data");
	/* round 1: nothing is released at its end (no previous round); newest 30 */
	sample(r, 30, 0, 100, 100, ORDER_IP);
	comm(r, 10, 0, 100, 100, "alpha", 1);
	switch_rec(r, 25, 0, 100, 1);
	mmap_rec(r, 15, 100, 0x400000, 0x1000, 0, ORDER_SO);
	sample(r, 20, 1, 100, 100, ORDER_IP);
	sample(r, 12, 1, 100, 100, ORDER_IP);   /* before the MMAP in time, after it in the file */
	round_end(r);
	/* round 2: its end releases up to 30; newest 50 */
	sample(r, 50, 0, 100, 100, ORDER_IP);
	sample(r, 28, 1, 100, 100, ORDER_IP);
	comm(r, 45, 0, 100, 100, "beta", 0);
	switch_rec(r, 35, 1, 100, 0);
	sample(r, 40, 0, 100, 100, ORDER_IP);
	round_end(r);
	/* round 3: 27 is older than 30, already released: late; its end releases up to 50 */
	sample(r, 27, 0, 100, 100, ORDER_IP);
	sample(r, 60, 1, 100, 100, ORDER_IP);
	round_end(r);
	/* the end releases 60 */
	return rec_close(r);
}

static void test_order(const struct rec *r)
{
	struct got g = { .n = 0 };
	struct rb_session_stats st;
	struct pd_error err;
	int rc = run(r->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 0, "order: rb_session_run returns 0 (%d %s)", rc, err.msg);
	static const char kinds[] = "SSWSSSWSSS";
	static const uint64_t times[] = { 12, 20, 25, 28, 30, 27, 35, 40, 50, 60 };
	ok(sequence_is(&g, kinds, times, 10),
	   "order: samples and switches reach the sink in time order round by round, the late one (27) at the next round");
	ok(st.late == 1, "order: one record older than one already released counts late (%" PRIu64 ")", st.late);
	ok(st.samples == 8 && st.switches == 2 && st.records == 16 && st.samples_out_of_window == 0,
	   "order: stats count 8 samples, 2 switches, 16 records (%" PRIu64 ", %" PRIu64 ", %" PRIu64 ")",
	   st.samples, st.switches, st.records);
	int i12 = find(&g, 'S', 12), i20 = find(&g, 'S', 20), i60 = find(&g, 'S', 60);
	ok(i12 >= 0 && !g.ev[i12].has_map && i20 >= 0 && g.ev[i20].has_map && !strcmp(g.ev[i20].dso, ORDER_SO) &&
	   i60 >= 0 && g.ev[i60].has_map,
	   "order: the MMAP at 15 applies in time order: a sample at 12 has no map, one at 20 has it");
	int comms_ok = 1;
	for (int i = 0; i < g.n && i < 64; i++)
		if (g.ev[i].kind == 'S')
			comms_ok &= !strcmp(g.ev[i].comm, g.ev[i].time > 45 ? "beta" : "alpha");
	ok(comms_ok, "order: every sample shows the comm in effect at its time (alpha from 10, beta from 45), the late one too");
	int w25 = find(&g, 'W', 25), w35 = find(&g, 'W', 35);
	ok(w25 >= 0 && g.ev[w25].out && g.ev[w25].cpu == 0 && g.ev[w25].pid == 100 &&
	   w35 >= 0 && !g.ev[w35].out && g.ev[w35].cpu == 1,
	   "order: switches carry their direction, CPU and thread");
	ok(g.begins == 1 && g.ends == 1 && g.late_calls == 0, "order: begin and end once, nothing after end");
}

/* ---------------------------------------------------------- 2. the machine */

/* A function of this binary whose symbol the session must find. */
void rbtest_session_marker(void);
__attribute__((noinline)) void rbtest_session_marker(void)
{
	__asm__ volatile("");
}

/* The executable mapping of this process that holds @addr, from /proc/self/maps. */
static int self_map(uint64_t addr, uint64_t *start, uint64_t *len, uint64_t *pgoff, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4600];
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &at) < 4 || !at)
			continue;
		if (addr < s || addr >= e || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, size, "%s", line + at);
		*start = s;
		*len = e - s;
		*pgoff = off;
		found = 1;
	}
	if (f)
		fclose(f);
	return found;
}

#define ANON_START 0x10000000ULL
#define GONE_START 0x20000000ULL
#define GONE_PGOFF 0x3000ULL
#define GONE_SO "/nonexistent/libgone.so"

static struct {
	uint64_t start, len, pgoff;
	char path[4096];
	int ok;
} self;

static int write_machine(struct rec *r)
{
	uint64_t marker = (uint64_t)(uintptr_t)&rbtest_session_marker;
	self.ok = self_map(marker, &self.start, &self.len, &self.pgoff, self.path, sizeof(self.path));
	rec_open(r, "machine.data");
	comm(r, 100, 0, 200, 200, "server", 1);
	comm(r, 101, 0, 200, 201, "worker", 0);
	mmap_rec(r, 102, 200, ANON_START, 0x2000, ANON_START, "//anon");
	mmap_rec(r, 103, 200, GONE_START, 0x4000, GONE_PGOFF, GONE_SO);
	if (self.ok)
		mmap_rec(r, 104, 200, self.start, self.len, self.pgoff, self.path);
	round_end(r);
	sample(r, 110, 0, 200, 201, ANON_START + 0x1234);
	sample(r, 111, 0, 200, 201, GONE_START + 0x2468);
	sample(r, 112, 1, 200, 200, marker);
	sample(r, 113, 1, 200, 200, 0x30000000);       /* in no mapping */
	sample(r, 114, 1, 300, 300, 0x1000);           /* a thread the recording never named */
	return rec_close(r);
}

static void test_machine(const struct rec *r)
{
	struct got g = { .n = 0 };
	struct rb_session_stats st;
	struct pd_error err;
	int rc = run(r->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 0 && g.samples == 5, "machine: 5 samples delivered (rc %d, %d)", rc, g.samples);
	int a = find(&g, 'S', 110);
	ok(a >= 0 && g.ev[a].pid == 200 && g.ev[a].tid == 201 && g.ev[a].main_tid == 200 &&
	   !strcmp(g.ev[a].thread_comm, "worker") && !strcmp(g.ev[a].comm, "server"),
	   "machine: a thread's sample has its thread (worker), its main thread, and the comm perf shows (the main thread's, server)");
	/* perf names executable anonymous memory after the JIT map file it would read, addresses their own */
	ok(a >= 0 && g.ev[a].has_map && !strcmp(g.ev[a].dso, "/tmp/perf-200.map") && !g.ev[a].sym[0] &&
	   g.ev[a].addr == 0x1234 + ANON_START,
	   "machine: an address in executable //anon has its map (named /tmp/perf-200.map, as perf), no symbol, and addr = ip (%#" PRIx64 ")",
	   a >= 0 ? g.ev[a].addr : 0);
	int b = find(&g, 'S', 111);
	ok(b >= 0 && g.ev[b].has_map && !strcmp(g.ev[b].dso, GONE_SO) && !g.ev[b].sym[0] &&
	   g.ev[b].addr == 0x2468 + GONE_PGOFF,
	   "machine: an address in a missing file has its map, no symbol, and addr = ip - start + pgoff (%#" PRIx64 ")",
	   b >= 0 ? g.ev[b].addr : 0);
	int c = find(&g, 'S', 112);
	if (self.ok)
		ok(c >= 0 && g.ev[c].has_map && !strcmp(g.ev[c].dso, self.path) &&
		   !strcmp(g.ev[c].sym, "rbtest_session_marker") &&
		   g.ev[c].sym_start <= g.ev[c].addr && g.ev[c].addr < g.ev[c].sym_end &&
		   g.ev[c].comm[0] && !strcmp(g.ev[c].comm, "server") && g.ev[c].main_tid == 200,
		   "machine: an address in a mapped ELF file resolves to its symbol (%s in %s)",
		   c >= 0 ? g.ev[c].sym : "-", self.path);
	else
		printf("ok %d - machine: symbol of a mapped ELF file # SKIP this binary's mapping not found\n", ++tap_n);
	int d = find(&g, 'S', 113);
	ok(d >= 0 && !g.ev[d].has_map && !g.ev[d].dso[0] && !g.ev[d].sym[0] && g.ev[d].addr == 0x30000000,
	   "machine: an address in no mapping has no map, no symbol, and addr = ip");
	int e = find(&g, 'S', 114);
	ok(e >= 0 && g.ev[e].pid == 300 && g.ev[e].tid == 300 && g.ev[e].main_tid == 300 &&
	   !strcmp(g.ev[e].comm, ":300") && !g.ev[e].has_map,
	   "machine: a thread never named gets one, shown as ':tid' (%s)", e >= 0 ? g.ev[e].comm : "-");
}

/* ---------------------------------------------------------- 3. --time and -C */

static const struct { uint64_t time; uint32_t cpu; int in_window, selected; } win_samples[] = {
	{ 150, 0, 0, 0 },   /* before the window */
	{ 200, 0, 1, 1 },   /* its start is in it */
	{ 250, 1, 1, 0 },   /* CPU 1 is not in "0,2-3" */
	{ 300, 2, 1, 1 },
	{ 350, 3, 1, 1 },
	{ 400, 4, 1, 0 },   /* nor CPU 4 */
	{ 500, 3, 1, 1 },
	{ 600, 2, 1, 1 },   /* its end is in it */
	{ 601, 0, 0, 0 },   /* after it */
	{ 700, 3, 0, 0 },
};
static const struct { uint64_t time; uint32_t cpu; int selected; } win_switches[] = {
	{ 210, 0, 1 }, { 220, 1, 0 }, { 230, 2, 1 }, { 240, 3, 1 }, { 260, 4, 0 },
};
#define NWS (sizeof(win_samples) / sizeof(win_samples[0]))
#define NWW (sizeof(win_switches) / sizeof(win_switches[0]))

static int write_window(struct rec *r)
{
	rec_open(r, "window.data");
	comm(r, 1, 0, 400, 400, "win", 1);
	for (size_t i = NWS; i-- > 0;)     /* newest first: the session orders them */
		sample(r, win_samples[i].time, win_samples[i].cpu, 400, 400, 0x1000);
	for (size_t i = 0; i < NWW; i++)
		switch_rec(r, win_switches[i].time, win_switches[i].cpu, 400, (int)(i % 2));
	return rec_close(r);
}

static void test_window(const struct rec *r)
{
	struct got g = { .n = 0 };
	struct rb_session_stats st;
	struct pd_error err;
	int rc = run(r->path, &g, &st, &err, 200, 600, "0,2-3");
	ok(rc == 0, "window: rb_session_run returns 0 (%d %s)", rc, err.msg);
	uint64_t outside = 0, want = 0;
	int samples_ok = 1, switches_ok = 1;
	for (size_t i = 0; i < NWS; i++) {
		outside += !win_samples[i].in_window;
		want += (uint64_t)win_samples[i].selected;
		int k = find(&g, 'S', win_samples[i].time);
		if ((k >= 0) != win_samples[i].selected) {
			diag("sample at %" PRIu64 " on CPU %u %s", win_samples[i].time, win_samples[i].cpu,
			     k >= 0 ? "delivered" : "not delivered");
			samples_ok = 0;
		}
	}
	ok(st.samples == NWS, "window: stats.samples counts every sample (%" PRIu64 ")", st.samples);
	ok(st.samples_out_of_window == outside && outside == 3,
	   "window: samples_out_of_window counts those outside [200, 600] (%" PRIu64 ")", st.samples_out_of_window);
	ok(samples_ok && (uint64_t)g.samples == want,
	   "window: only samples in [200, 600] on CPUs 0, 2, 3 reach the sink, both ends included (%d)", g.samples);
	for (size_t i = 0; i < NWW; i++) {
		int k = find(&g, 'W', win_switches[i].time);
		if ((k >= 0) != win_switches[i].selected) {
			diag("switch at %" PRIu64 " on CPU %u %s", win_switches[i].time, win_switches[i].cpu,
			     k >= 0 ? "delivered" : "not delivered");
			switches_ok = 0;
		}
	}
	ok(switches_ok && g.switches == 3, "window: switches on CPUs outside -C are not delivered (%d delivered)", g.switches);

	memset(&g, 0, sizeof(g));
	rc = run(r->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 0 && (size_t)g.samples == NWS && g.switches == (int)NWW && st.samples_out_of_window == 0,
	   "window: without --time and -C every sample and switch is delivered (%d, %d)", g.samples, g.switches);
}

/* ---------------------------------------------------------- 4. losses */

static int write_losses(struct rec *r)
{
	rec_open(r, "losses.data");
	sample(r, 420, 1, 500, 501, 0x1000);
	sample(r, 520, 1, 500, 501, 0x1000);   /* after the loss in time, before it in the file */
	sample(r, 450, 0, 500, 501, 0x1000);   /* another CPU: not where its loss starts */
	lost(r, 500, 1, 500, 501, 33);         /* record 3 */
	lost(r, 600, 3, 500, 502, 5);          /* record 4: nothing before it on CPU 3 */
	return rec_close(r);
}

static void test_losses(const struct rec *r)
{
	struct got g = { .n = 0 };
	struct rb_session_stats st;
	struct pd_error err;
	int rc = run(r->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 0 && st.gaps == 2 && g.gaps == 2, "losses: two LOST records are two gaps, counted in stats.gaps (%" PRIu64 ")",
	   st.gaps);
	int a = -1, b = -1;
	for (int i = 0; i < g.n && i < 64; i++)
		if (g.ev[i].kind == 'G') {
			if (g.ev[i].time_end == 500)
				a = i;
			if (g.ev[i].time_end == 600)
				b = i;
		}
	ok(a >= 0 && !strcmp(g.ev[a].reason, "kernel lost records") && !strcmp(g.ev[a].source, "kernel") &&
	   g.ev[a].records_lost == 33 && g.ev[a].cpu == 1 && g.ev[a].pid == 500 && g.ev[a].tid == 501,
	   "losses: the gap says kernel lost records, 33 of them, on CPU 1 of thread 500/501");
	ok(a >= 0 && g.ev[a].file_offset == r->data_offset + r->off[3],
	   "losses: the gap's file_offset is the LOST record's (%" PRIu64 ", want %" PRIu64 ")",
	   a >= 0 ? g.ev[a].file_offset : 0, r->data_offset + r->off[3]);
	ok(a >= 0 && g.ev[a].time == 420,
	   "losses: the gap starts at the previous record of its CPU in time order, 420 (%" PRIu64 ")",
	   a >= 0 ? g.ev[a].time : 0);
	ok(b >= 0 && g.ev[b].time == 600 && g.ev[b].records_lost == 5 && g.ev[b].cpu == 3 &&
	   g.ev[b].file_offset == r->data_offset + r->off[4],
	   "losses: with no earlier record on its CPU a gap starts at its own time");
	static const uint64_t times[] = { 420, 450, 420, 520, 600 };   /* a gap's time here is its start */
	ok(sequence_is(&g, "SSGSG", times, 5), "losses: gaps come in time order with the samples");
}

/* ---------------------------------------------------------- 5. the sink's stop codes */

static void test_stop(const struct rec *order, const struct rec *losses)
{
	struct got g = { .n = 0, .stop_sample_at = 3, .code = 42, .end_code = 99 };
	struct rb_session_stats st;
	struct pd_error err;
	int rc = run(order->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 42, "stop: a sample callback's code 42 is what rb_session_run returns (%d)", rc);
	ok(g.samples == 3 && g.n == 4 && g.late_calls == 0,
	   "stop: nothing is delivered after it (%d samples, %d events)", g.samples, g.n);
	ok(g.ends == 1, "stop: end is still called, once (%d)", g.ends);
	ok(rc != 99, "stop: end's own code does not replace the stop code");

	memset(&g, 0, sizeof(g));
	g.stop_switch_at = 1;
	g.code = 5;
	rc = run(order->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 5 && g.switches == 1 && g.n == 3 && g.late_calls == 0 && g.ends == 1,
	   "stop: a context_switch callback's code stops the session the same way (%d, %d events)", rc, g.n);

	memset(&g, 0, sizeof(g));
	g.stop_gap_at = 1;
	g.code = 6;
	rc = run(losses->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 6 && g.gaps == 1 && g.n == 3 && g.late_calls == 0 && g.ends == 1,
	   "stop: a gap callback's code stops the session the same way (%d, %d events)", rc, g.n);

	memset(&g, 0, sizeof(g));
	g.begin_code = 13;
	rc = run(order->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 13 && g.n == 0 && g.ends == 1, "stop: begin's code stops before any event (%d, %d events), end still called",
	   rc, g.n);

	memset(&g, 0, sizeof(g));
	g.end_code = 7;
	rc = run(order->path, &g, &st, &err, 0, 0, NULL);
	ok(rc == 7 && g.n == 10, "stop: with no earlier stop, end's code is returned (%d) after every event", rc);
}

/* ---------------------------------------------------------- 6. damage and missing files */

static int write_damaged(struct rec *r)
{
	rec_open(r, "damaged.data");
	comm(r, 1, 0, 600, 600, "cut", 1);
	sample(r, 30, 0, 600, 600, 0x1000);
	sample(r, 10, 0, 600, 600, 0x1000);
	round_end(r);
	sample(r, 20, 1, 600, 600, 0x1000);
	sample(r, 40, 1, 600, 600, 0x1000);     /* record 5: the file is cut inside it */
	sample(r, 50, 1, 600, 600, 0x1000);
	return rec_close(r);
}

static void warn_count(void *ctx, const struct pd_error *w)
{
	(void)w;
	(*(int *)ctx)++;
}

static void test_damage(const struct rec *r)
{
	uint64_t cut = r->data_offset + r->off[5];
	if (!ok(truncate(r->path, (off_t)(cut + 12)) == 0, "damage: file cut 12 bytes into record 5 (offset %" PRIu64 ")", cut))
		return;
	struct got g = { .n = 0 };
	struct rb_session_stats st;
	struct pd_error err;
	struct rb_session_opts o;
	struct rb_sink k = { .ctx = &g, .begin = k_begin, .sample = k_sample, .end = k_end };
	int warnings = 0;
	memset(&o, 0, sizeof(o));
	o.path = r->path;
	o.machine.buildid_dir = "/nonexistent";
	o.warn = warn_count;
	o.warn_ctx = &warnings;
	int rc = rb_session_run(&o, &k, &st, &err);
	ok(rc == 0, "damage: a cut recording is not a failure (%d %s)", rc, rc ? err.msg : "");
	static const uint64_t times[] = { 10, 20, 30 };
	ok(sequence_is(&g, "SSS", times, 3) && !strcmp(g.ev[0].comm, "cut"),
	   "damage: the samples read before the cut are delivered, in time order");
	ok(st.stop.code == PD_ERR_TRUNCATED && st.stop.offset == cut && st.stop.msg[0],
	   "damage: stats.stop says the file ends inside the record at %" PRIu64 " (code %d, offset %" PRIu64 ": %s)",
	   cut, st.stop.code, st.stop.offset, st.stop.msg);
	ok(st.samples == 3 && g.ends == 1, "damage: 3 samples counted, end called");
	diag("%d warnings", warnings);

	memset(&g, 0, sizeof(g));
	char missing[4200];
	snprintf(missing, sizeof(missing), "%s/absent.data", dir);
	rc = run(missing, &g, &st, &err, 0, 0, NULL);
	ok(rc < 0 && err.code == rc && strstr(err.msg, missing) != NULL,
	   "missing: a negative status with a message naming the file (%d: %s)", rc, err.msg);
	ok(g.begins == 0 && g.ends == 0 && g.n == 0, "missing: no sink callback at all");

	memset(&g, 0, sizeof(g));
	rc = run(r->path, &g, &st, &err, 0, 0, "0,3-1");
	ok(rc == PD_ERR_INVAL && strstr(err.msg, "0,3-1") != NULL && g.begins == 0,
	   "bad -C list: PD_ERR_INVAL naming it, no sink callback (%d: %s)", rc, err.msg);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/test_session.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("not ok 1 - cannot create a temporary directory in %s\n1..1\n", tmp && *tmp ? tmp : "/tmp");
		return 1;
	}
	static struct rec order, machine, window, losses, damaged;
	if (ok(write_order(&order) == 0, "order.data written")) {
		test_order(&order);
		if (ok(write_losses(&losses) == 0, "losses.data written")) {
			test_losses(&losses);
			test_stop(&order, &losses);
		}
	}
	if (ok(write_machine(&machine) == 0, "machine.data written"))
		test_machine(&machine);
	if (ok(write_window(&window) == 0, "window.data written"))
		test_window(&window);
	if (ok(write_damaged(&damaged) == 0, "damaged.data written"))
		test_damage(&damaged);
	static const struct rec *const all[] = { &order, &machine, &window, &losses, &damaged };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i]->path[0])
			unlink(all[i]->path);
	rmdir(dir);
	return done_testing();
}
