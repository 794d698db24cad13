/*
 * perfetto.c - see perfetto.h. Every event is written as it comes; what is
 * kept: the threads seen (for their names at the end), each CPU's running
 * thread and the functions' names already escaped.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "perfetto.h"
#include "decoder/calls/idmap.h"
#include "store/trace_calls.h"
#include "decoder/ftrace/tracedat.h"

struct cpu { int32_t cpu; const struct rb_thread *run; uint64_t since; };
struct thr { const struct rb_thread *t; int32_t pid, tid; uint64_t branches; };

struct rb_perfetto {
	FILE *out;
	struct rb_calls *calls;
	struct rb_machine *m;
	struct rb_idmap thr_ids;          /* (thread) -> thr + 1 */
	struct thr *thr;
	size_t nr_thr, cap_thr;
	struct rb_idmap cpu_ids;          /* (cpu) -> cpus + 1 */
	struct cpu *cpus;
	size_t nr_cpus, cap_cpus;
	struct rb_idmap names;            /* (sym) -> escaped + 1 */
	char **escaped;
	size_t nr_esc, cap_esc;
	uint64_t last_time;
	struct rb_perfetto_stats st;
	int timed_known, failed;
	char *buf;                        /* a stack string (samples) */
	size_t cap_buf;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 64;
	void *p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* @s as a JSON string, malloc'd. */
static char *json_str(const char *s)
{
	json_t *j = json_string(s);
	if (!j)
		j = json_stringn_nocheck(s, strlen(s));
	char *r = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	return r;
}

/* Writes @s as a JSON string. */
static int put_str(struct rb_perfetto *p, const char *s)
{
	char *e = json_str(s);
	if (!e)
		return -1;
	fputs(e, p->out);
	free(e);
	return 0;
}

/* The event separator and its opening. */
static void ev_open(struct rb_perfetto *p)
{
	fputs(",\n{", p->out);
}

/* "ts": ns as microseconds with the nanoseconds as decimals. */
static void put_ts(struct rb_perfetto *p, const char *key, uint64_t ns)
{
	fprintf(p->out, "\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static struct thr *thr_of(struct rb_perfetto *p, const struct rb_thread *t)
{
	struct rb_idkey *k = rb_idmap_get(&p->thr_ids, (uintptr_t)t, t->generation, 0);
	if (!k)
		return NULL;
	if (!k->id) {
		if (grow((void **)&p->thr, &p->cap_thr, p->nr_thr, sizeof(*p->thr)))
			return NULL;
		p->thr[p->nr_thr++] = (struct thr){ t, t->pid, t->tid, 0 };
		k->id = p->nr_thr;
	}
	return &p->thr[k->id - 1];
}

static struct cpu *cpu_of(struct rb_perfetto *p, int32_t cpu)
{
	struct rb_idkey *k = rb_idmap_get(&p->cpu_ids, (uint64_t)(uint32_t)cpu, 0, 0);
	if (!k)
		return NULL;
	if (!k->id) {
		if (grow((void **)&p->cpus, &p->cap_cpus, p->nr_cpus, sizeof(*p->cpus)))
			return NULL;
		p->cpus[p->nr_cpus++] = (struct cpu){ .cpu = cpu };
		k->id = p->nr_cpus;
	}
	return &p->cpus[k->id - 1];
}

/* A function's name as a JSON string, escaped once. */
static const char *name_of(struct rb_perfetto *p, uint64_t sym)
{
	const char *n = rb_trace_calls_name((const struct rb_sym *)(uintptr_t)sym);
	struct rb_idkey *k = rb_idmap_get(&p->names, strcmp(n, "[unknown]") ? sym : 0, 0, 0);
	if (!k)
		return NULL;
	if (!k->id) {
		if (grow((void **)&p->escaped, &p->cap_esc, p->nr_esc, sizeof(*p->escaped)))
			return NULL;
		if (!(p->escaped[p->nr_esc] = json_str(n)))
			return NULL;
		k->id = ++p->nr_esc;
	}
	return p->escaped[k->id - 1];
}

static void seen(struct rb_perfetto *p, uint64_t time)
{
	if (time > p->last_time)
		p->last_time = time;
}

static int on_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	(void)ctx, (void)id, (void)parent, (void)sym, (void)ip;
	return 0;
}

static int on_enter(void *ctx, uint64_t id, uint64_t thread, uint64_t comm, uint64_t path, uint64_t sym, uint64_t time)
{
	struct rb_perfetto *p = ctx;
	(void)id, (void)comm, (void)path;
	const struct rb_thread *t = (const struct rb_thread *)(uintptr_t)thread;
	const char *name = name_of(p, sym);
	if (!name)
		return -ENOMEM;
	p->st.calls++;
	ev_open(p);
	fprintf(p->out, "\"ph\":\"B\",\"cat\":\"call\",\"pid\":%d,\"tid\":%d,", t->pid, t->tid);
	put_ts(p, "ts", time);
	fprintf(p->out, ",\"name\":%s}", name);
	return ferror(p->out) ? -EIO : 0;
}

static int on_call(void *ctx, const struct rb_call *c)
{
	struct rb_perfetto *p = ctx;
	const struct rb_thread *t = (const struct rb_thread *)(uintptr_t)c->thread;
	ev_open(p);
	fprintf(p->out, "\"ph\":\"E\",\"pid\":%d,\"tid\":%d,", t->pid, t->tid);
	put_ts(p, "ts", c->return_time);
	fputc('}', p->out);
	return ferror(p->out) ? -EIO : 0;
}

static int pf_trace(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_perfetto *p = ctx;
	struct rb_calls_branch b;
	if (p->failed || !rb_trace_calls_branch(p->m, ev, &b))
		return p->failed;
	if (!p->timed_known) {
		p->timed_known = 1;
		p->st.timed = ev->time != 0;
	}
	p->st.from_trace = 1;
	struct thr *t = thr_of(p, ev->thread);
	if (!t)
		return p->failed = 1;
	if (!p->st.timed)
		b.time = 1000 * ++t->branches;   /* no timing: a branch a microsecond */
	seen(p, b.time);
	return rb_calls_branch(p->calls, &b) ? (p->failed = 1) : 0;
}

/* CPU @c stops running its thread at @time: its slice. */
static int cpu_slice_end(struct rb_perfetto *p, struct cpu *c, uint64_t time)
{
	const struct rb_thread *t = c->run;
	if (!t)
		return 0;
	c->run = NULL;
	p->st.cpu_slices++;
	ev_open(p);
	fprintf(p->out, "\"ph\":\"X\",\"cat\":\"sched\",\"pid\":%d,\"tid\":%d,", PERFETTO_PID_CPUS,
		PERFETTO_PID_CPUS + 1 + c->cpu);
	put_ts(p, "ts", c->since);
	fputc(',', p->out);
	put_ts(p, "dur", time > c->since ? time - c->since : 0);
	char b[320];
	snprintf(b, sizeof(b), "%s %d/%d", t->comm ? t->comm->name : "[unknown]", t->pid, t->tid);
	fputs(",\"name\":", p->out);
	if (put_str(p, b))
		return -1;
	fprintf(p->out, ",\"args\":{\"pid\":%d,\"tid\":%d}}", t->pid, t->tid);
	return ferror(p->out) ? -1 : 0;
}

/* What a CPU runs from a switch on: the thread switched in (the next one of a CPU-wide switch out). */
static int pf_switch(void *ctx, const struct rb_switch_ev *ev)
{
	struct rb_perfetto *p = ctx;
	if (p->failed || ev->cpu < 0)
		return p->failed;
	struct cpu *c = cpu_of(p, ev->cpu);
	if (!c)
		return p->failed = 1;
	p->st.switches++;
	seen(p, ev->time);
	const struct rb_thread *in = ev->out ? ev->b : ev->a;
	if (in && !in->pid && !in->tid)
		in = NULL;                   /* the idle task: no slice */
	if (in == c->run)
		return 0;
	if (cpu_slice_end(p, c, ev->time))
		return p->failed = 1;
	if (in && !thr_of(p, in))
		return p->failed = 1;
	c->run = in;
	c->since = ev->time;
	return 0;
}

static int pf_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_perfetto *p = ctx;
	if (p->failed)
		return p->failed;
	if (rb_calls_gap_restarts(g->reason) && rb_calls_restart(p->calls, g->cpu, g->tid))
		return p->failed = 1;
	p->st.gaps++;
	if (!g->time_start) {
		p->st.gaps_unplaced++;
		return 0;
	}
	if (g->cpu >= 0 && !cpu_of(p, g->cpu))
		return p->failed = 1;
	char b[256];
	snprintf(b, sizeof(b), "[trace lost: %s]", g->reason);
	ev_open(p);
	fprintf(p->out, "\"ph\":\"X\",\"cat\":\"gap\",\"cname\":\"terrible\",\"pid\":%d,\"tid\":%d,", PERFETTO_PID_LOSSES,
		PERFETTO_PID_LOSSES + 1 + g->cpu);
	put_ts(p, "ts", g->time_start);
	fputc(',', p->out);
	put_ts(p, "dur", g->time_end > g->time_start ? g->time_end - g->time_start : 0);
	fputs(",\"name\":", p->out);
	if (put_str(p, b))
		return p->failed = 1;
	fputs(",\"args\":{\"source\":", p->out);
	if (put_str(p, g->source ? g->source : ""))
		return p->failed = 1;
	fprintf(p->out, ",\"cpu\":%d,\"pid\":%d,\"tid\":%d,\"bytes_lost\":%" PRIu64 ",\"records_lost\":%" PRIu64
		",\"detail\":", g->cpu, g->pid, g->tid, g->bytes_lost, g->records_lost);
	if (put_str(p, g->detail ? g->detail : ""))
		return p->failed = 1;
	fputs("}}", p->out);
	return ferror(p->out) ? (p->failed = 1) : 0;
}

static int pf_counter(void *ctx, const struct rb_imc_counter_ev *ev)
{
	struct rb_perfetto *p = ctx;
	if (p->failed)
		return p->failed;
	char b[256];
	if (ev->event.name)
		snprintf(b, sizeof(b), "%s cpu %d", ev->event.name, ev->cpu);
	else
		snprintf(b, sizeof(b), "%s/%" PRIu64 " cpu %d", ev->pmu ? ev->pmu : "?", ev->event.config, ev->cpu);
	p->st.counters++;
	ev_open(p);
	fprintf(p->out, "\"ph\":\"C\",\"cat\":\"imc\",\"pid\":%d,\"tid\":%d,", PERFETTO_PID_COUNTERS, PERFETTO_PID_COUNTERS);
	put_ts(p, "ts", ev->time);
	fputs(",\"name\":", p->out);
	if (put_str(p, b))
		return p->failed = 1;
	fprintf(p->out, ",\"args\":{\"value\":%" PRIu64 "}}", ev->value);
	return ferror(p->out) ? (p->failed = 1) : 0;
}

static int pf_ftrace(void *ctx, const struct rb_ftrace_ev *ev)
{
	struct rb_perfetto *p = ctx;
	if (p->failed)
		return p->failed;
	if (ev->cpu >= 0 && !cpu_of(p, ev->cpu))
		return p->failed = 1;
	char b[256];
	snprintf(b, sizeof(b), "%s:%s", ev->system ? ev->system : "", ev->name ? ev->name : "");
	p->st.ftrace++;
	seen(p, ev->time);
	ev_open(p);
	fprintf(p->out, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"ftrace\",\"pid\":%d,\"tid\":%d,", PERFETTO_PID_CPUS,
		PERFETTO_PID_CPUS + 1 + ev->cpu);
	put_ts(p, "ts", ev->time);
	fputs(",\"name\":", p->out);
	if (put_str(p, b))
		return p->failed = 1;
	fprintf(p->out, ",\"args\":{\"pid\":%d,\"comm\":", ev->pid);
	if (put_str(p, ev->comm ? ev->comm : ""))
		return p->failed = 1;
	/* the fields are a JSON object already (tracedat.h) */
	fprintf(p->out, ",\"fields\":%s}}", ev->fields && *ev->fields ? ev->fields : "{}");
	return ferror(p->out) ? (p->failed = 1) : 0;
}

static int pf_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_perfetto *p = ctx;
	if (p->failed)
		return p->failed;
	p->st.samples++;
	if (!ev->nr_nodes || !ev->has_time)
		return 0;
	p->st.samples_with_chain++;
	seen(p, ev->time);
	if (!thr_of(p, ev->thread))
		return p->failed = 1;
	size_t len = 0;
	for (size_t i = 0; i < ev->nr_nodes; i++) {
		const char *n = rb_trace_calls_name(ev->nodes[i].al.sym);
		size_t l = strlen(n);
		if (len + l + 2 > p->cap_buf) {
			size_t cap = 2 * (len + l + 2);
			char *v = realloc(p->buf, cap);
			if (!v)
				return p->failed = 1;
			p->buf = v;
			p->cap_buf = cap;
		}
		if (i)
			p->buf[len++] = ';';
		memcpy(p->buf + len, n, l + 1);
		len += l;
	}
	ev_open(p);
	fprintf(p->out, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"pid\":%d,\"tid\":%d,", ev->thread->pid,
		ev->thread->tid);
	put_ts(p, "ts", ev->time);
	fputs(",\"name\":", p->out);
	if (put_str(p, rb_trace_calls_name(ev->nodes[ev->nr_nodes - 1].al.sym)))
		return p->failed = 1;
	fprintf(p->out, ",\"args\":{\"period\":%" PRIu64 ",\"stack\":", ev->period);
	if (put_str(p, p->buf))
		return p->failed = 1;
	fputs("}}", p->out);
	return ferror(p->out) ? (p->failed = 1) : 0;
}

static int pf_begin(void *ctx, struct rb_machine *m)
{
	((struct rb_perfetto *)ctx)->m = m;
	return 0;
}

/* One "M" event: @what ("process_name", "thread_name") of (@pid, @tid). */
static int meta(struct rb_perfetto *p, const char *what, int32_t pid, int32_t tid, const char *name)
{
	ev_open(p);
	fprintf(p->out, "\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", what, pid, tid);
	if (put_str(p, name))
		return -1;
	fputs("}}", p->out);
	return 0;
}

/* Every call closed, every CPU's slice ended; then the names (the session's objects still live). */
static int pf_end(void *ctx)
{
	struct rb_perfetto *p = ctx;
	if (p->failed || rb_calls_flush(p->calls))
		return p->failed = 1;
	for (size_t i = 0; i < p->nr_cpus; i++)
		if (cpu_slice_end(p, &p->cpus[i], p->last_time))
			return p->failed = 1;
	for (size_t i = 0; i < p->nr_thr; i++) {
		const struct rb_thread *t = p->thr[i].t;
		const char *comm = t->comm ? t->comm->name : "[unknown]";
		if ((t->pid == t->tid && meta(p, "process_name", t->pid, t->tid, comm)) ||
		    meta(p, "thread_name", t->pid, t->tid, comm))
			return p->failed = 1;
	}
	if (p->nr_cpus && meta(p, "process_name", PERFETTO_PID_CPUS, PERFETTO_PID_CPUS, "CPUs"))
		return p->failed = 1;
	for (size_t i = 0; i < p->nr_cpus; i++) {
		char b[64];
		snprintf(b, sizeof(b), "CPU %d", p->cpus[i].cpu);
		if (meta(p, "thread_name", PERFETTO_PID_CPUS, PERFETTO_PID_CPUS + 1 + p->cpus[i].cpu, b))
			return p->failed = 1;
		snprintf(b, sizeof(b), "CPU %d losses", p->cpus[i].cpu);
		if (meta(p, "thread_name", PERFETTO_PID_LOSSES, PERFETTO_PID_LOSSES + 1 + p->cpus[i].cpu, b))
			return p->failed = 1;
	}
	if (p->st.counters && meta(p, "process_name", PERFETTO_PID_COUNTERS, PERFETTO_PID_COUNTERS, "IMC counters"))
		return p->failed = 1;
	return ferror(p->out) ? (p->failed = 1) : 0;
}

struct rb_perfetto *rb_perfetto_new(FILE *out)
{
	struct rb_perfetto *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->out = out;
	struct rb_calls_out o = { .ctx = p, .path = on_path, .call = on_call, .enter = on_enter };
	if (!(p->calls = rb_calls_new(&o))) {
		free(p);
		return NULL;
	}
	/* an opening metadata event, so that every later event starts with a comma */
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"rbdecode " PACKAGE_VERSION "\"},\"traceEvents\":[\n"
	      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1100000000,\"tid\":1100000000,\"args\":{\"name\":\"trace losses\"}}",
	      out);
	return p;
}

void rb_perfetto_set_timed(struct rb_perfetto *p, int timed)
{
	p->timed_known = 1;
	p->st.timed = timed;
}

void rb_perfetto_sink(struct rb_perfetto *p, struct rb_sink *sink)
{
	*sink = (struct rb_sink){ .ctx = p, .begin = pf_begin, .sample = pf_sample, .context_switch = pf_switch,
				  .gap = pf_gap, .trace = pf_trace, .imc_counter = pf_counter, .ftrace_event = pf_ftrace,
				  .end = pf_end };
}

void rb_perfetto_stats(const struct rb_perfetto *p, struct rb_perfetto_stats *st) { *st = p->st; }

int rb_perfetto_finish(struct rb_perfetto *p)
{
	fputs("\n]}\n", p->out);
	return ferror(p->out) ? -1 : 0;
}

void rb_perfetto_free(struct rb_perfetto *p)
{
	if (!p)
		return;
	rb_calls_free(p->calls);
	rb_idmap_free(&p->thr_ids);
	rb_idmap_free(&p->cpu_ids);
	rb_idmap_free(&p->names);
	for (size_t i = 0; i < p->nr_esc; i++)
		free(p->escaped[i]);
	free(p->escaped);
	free(p->thr);
	free(p->cpus);
	free(p->buf);
	free(p);
}
