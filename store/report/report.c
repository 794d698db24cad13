/*
 * report.c - see report.h. The folded stacks come from store/folded, fed
 * the same events; the slowest calls from a calls builder of its own.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "report.h"
#include "store/folded/folded.h"
#include "store/trace_calls.h"

static const char PAGE[] =
#include "report_page.h"
	;

struct cpu_bins { int32_t cpu; uint64_t counts[RB_REPORT_BINS]; };
struct gap { uint64_t start, end, bytes, records; int32_t cpu; char *reason, *source, *detail; };
struct slow { uint64_t duration, start; char *name, *thread; };

struct rb_report {
	struct rb_folded *fold;
	struct rb_sink fs;               /* the folded stacks' sink, fed every event */
	struct rb_calls *calls;
	struct rb_machine *m;
	uint64_t *path_sym;              /* call path -> symbol key */
	size_t cap_paths;
	struct cpu_bins *cpus;
	size_t nr_cpus, cap_cpus;
	uint64_t t0, width;              /* bins: from t0, width ns each */
	int started;
	struct gap *gaps;
	size_t nr_gaps, cap_gaps;
	struct slow slow[RB_REPORT_SLOWEST];
	size_t nr_slow;
	struct rb_report_stats st;
	int failed;
};

/* One event of CPU @cpu at @t in the bins (widened until @t fits). */
static int bin(struct rb_report *r, int32_t cpu, uint64_t t)
{
	if (!r->started) {
		r->started = 1;
		r->t0 = t;
		r->width = 1000;
	}
	while (t >= r->t0 && (t - r->t0) / r->width >= RB_REPORT_BINS) {
		for (size_t i = 0; i < r->nr_cpus; i++) {
			uint64_t *c = r->cpus[i].counts;
			for (size_t b = 0; b < RB_REPORT_BINS / 2; b++)
				c[b] = c[2 * b] + c[2 * b + 1];
			memset(c + RB_REPORT_BINS / 2, 0, RB_REPORT_BINS / 2 * sizeof(*c));
		}
		r->width *= 2;
	}
	size_t i = 0;
	while (i < r->nr_cpus && r->cpus[i].cpu != cpu)
		i++;
	if (i == r->nr_cpus) {
		if (r->nr_cpus == r->cap_cpus) {
			size_t cap = r->cap_cpus ? 2 * r->cap_cpus : 8;
			struct cpu_bins *v = realloc(r->cpus, cap * sizeof(*v));
			if (!v)
				return -1;
			r->cpus = v;
			r->cap_cpus = cap;
		}
		memset(&r->cpus[i], 0, sizeof(r->cpus[i]));
		r->cpus[i].cpu = cpu;
		r->nr_cpus++;
	}
	r->cpus[i].counts[t >= r->t0 ? (t - r->t0) / r->width : 0]++;
	return 0;
}

static int on_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	struct rb_report *r = ctx;
	(void)parent, (void)ip;
	if (id >= r->cap_paths) {
		size_t cap = id + 1 > 2 * r->cap_paths ? (size_t)id + 1 : 2 * r->cap_paths;
		uint64_t *v = realloc(r->path_sym, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->path_sym = v;
		r->cap_paths = cap;
	}
	r->path_sym[id] = sym;
	return 0;
}

/* A call ended: kept if among the slowest (names copied: the objects go at the session's end). */
static int on_call(void *ctx, const struct rb_call *c)
{
	struct rb_report *r = ctx;
	r->st.calls++;
	size_t i = r->nr_slow;
	if (i == RB_REPORT_SLOWEST) {
		if (c->duration <= r->slow[i - 1].duration)
			return 0;
		free(r->slow[--i].name);
		free(r->slow[i].thread);
	} else {
		r->nr_slow++;
	}
	while (i > 0 && r->slow[i - 1].duration < c->duration) {
		r->slow[i] = r->slow[i - 1];
		i--;
	}
	const struct rb_thread *t = (const struct rb_thread *)(uintptr_t)c->thread;
	const struct rb_comm *cm = (const struct rb_comm *)(uintptr_t)c->comm;
	char b[320];
	snprintf(b, sizeof(b), "%s %d/%d", cm ? cm->name : "[unknown]", t->pid, t->tid);
	uint64_t sym = c->path < r->cap_paths ? r->path_sym[c->path] : 0;
	r->slow[i] = (struct slow){ c->duration, c->call_time,
				    strdup(rb_trace_calls_name((const struct rb_sym *)(uintptr_t)sym)), strdup(b) };
	return r->slow[i].name && r->slow[i].thread ? 0 : -ENOMEM;
}

static int rp_begin(void *ctx, struct rb_machine *m)
{
	struct rb_report *r = ctx;
	r->m = m;
	return r->fs.begin(r->fs.ctx, m);
}

static int rp_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_report *r = ctx;
	r->st.samples++;
	r->st.samples_with_chain += ev->nr_nodes != 0;
	if (ev->has_time && bin(r, ev->has_cpu ? (int32_t)ev->cpu : -1, ev->time))
		return r->failed = 1;
	return r->fs.sample(r->fs.ctx, ev) ? (r->failed = 1) : 0;
}

static int rp_trace(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_report *r = ctx;
	struct rb_calls_branch b;
	if (r->failed || !rb_trace_calls_branch(r->m, ev, &b))
		return r->failed;
	if (!r->st.from_trace)
		r->st.timed = ev->time != 0;
	r->st.from_trace = 1;
	if (bin(r, ev->cpu, ev->time) || rb_calls_branch(r->calls, &b))
		return r->failed = 1;
	return r->fs.trace(r->fs.ctx, ev) ? (r->failed = 1) : 0;
}

static int rp_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_report *r = ctx;
	if (r->failed)
		return r->failed;
	if (rb_calls_gap_restarts(g->reason) && rb_calls_restart(r->calls, g->cpu, g->tid))
		return r->failed = 1;
	if (r->fs.gap(r->fs.ctx, g))
		return r->failed = 1;
	r->st.gaps++;
	if (r->nr_gaps == RB_REPORT_MAX_GAPS)
		return 0;
	if (r->nr_gaps == r->cap_gaps) {
		size_t cap = r->cap_gaps ? 2 * r->cap_gaps : 64;
		struct gap *v = realloc(r->gaps, cap * sizeof(*v));
		if (!v)
			return r->failed = 1;
		r->gaps = v;
		r->cap_gaps = cap;
	}
	struct gap *n = &r->gaps[r->nr_gaps];
	*n = (struct gap){ g->time_start, g->time_end, g->bytes_lost, g->records_lost, g->cpu,
			   strdup(g->reason ? g->reason : ""), strdup(g->source ? g->source : ""),
			   strdup(g->detail ? g->detail : "") };
	r->nr_gaps++;
	return n->reason && n->source && n->detail ? 0 : (r->failed = 1);
}

static int rp_end(void *ctx)
{
	struct rb_report *r = ctx;
	int rc = r->fs.end(r->fs.ctx);
	if (r->failed || rc || rb_calls_flush(r->calls))
		return r->failed = 1;
	return 0;
}

struct rb_report *rb_report_new(void)
{
	struct rb_report *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	struct rb_calls_out o = { .ctx = r, .path = on_path, .call = on_call };
	if (!(r->fold = rb_folded_new()) || !(r->calls = rb_calls_new(&o))) {
		rb_report_free(r);
		return NULL;
	}
	rb_folded_sink(r->fold, &r->fs);
	return r;
}

void rb_report_sink(struct rb_report *r, struct rb_sink *sink)
{
	*sink = (struct rb_sink){ .ctx = r, .begin = rp_begin, .sample = rp_sample, .trace = rp_trace, .gap = rp_gap,
				  .end = rp_end };
}

void rb_report_stats(const struct rb_report *r, struct rb_report_stats *st)
{
	*st = r->st;
	st->stacks = rb_folded_lines(r->fold);
}

struct line { char *stack; uint64_t w; };

static int heavier(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	return x->w > y->w ? -1 : x->w < y->w;
}

/* The folded stacks as [[stack, weight], ...], the heaviest RB_REPORT_MAX_STACKS and the rest as one. */
static json_t *folded_json(struct rb_report *r, size_t *total)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return NULL;
	int rc = rb_folded_write(r->fold, m);
	if (fclose(m) || rc) {
		free(text);
		return NULL;
	}
	size_t n = 0, cap = 0;
	struct line *v = NULL;
	json_t *a = json_array();
	for (char *p = text, *nl; a && p && *p; p = nl ? nl + 1 : NULL) {
		if ((nl = strchr(p, '\n')))
			*nl = 0;
		char *sp = strrchr(p, ' ');
		if (!sp)
			continue;
		*sp = 0;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			struct line *w = realloc(v, cap * sizeof(*v));
			if (!w) {
				json_decref(a);
				a = NULL;
				break;
			}
			v = w;
		}
		v[n++] = (struct line){ p, strtoull(sp + 1, NULL, 10) };
	}
	*total = n;
	if (a && n > RB_REPORT_MAX_STACKS) {
		qsort(v, n, sizeof(*v), heavier);
		uint64_t rest = 0;
		for (size_t i = RB_REPORT_MAX_STACKS; i < n; i++)
			rest += v[i].w;
		v[RB_REPORT_MAX_STACKS] = (struct line){ "[other stacks]", rest };
		n = RB_REPORT_MAX_STACKS + 1;
	}
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_pack("[s, I]", v[i].stack, (json_int_t)v[i].w))) {
			json_decref(a);
			a = NULL;
		}
	free(v);
	free(text);
	return a;
}

static json_t *page_data(struct rb_report *r, const char *name, const char *info)
{
	size_t stacks = 0;
	json_t *folded = folded_json(r, &stacks);
	json_t *d = json_object(), *cpus = json_array(), *gaps = json_array(), *slow = json_array();
	if (!folded || !d || !cpus || !gaps || !slow)
		goto fail;
	for (size_t i = 0; i < r->nr_cpus; i++) {
		json_t *c = json_array();
		for (size_t b = 0; c && b < RB_REPORT_BINS; b++)
			json_array_append_new(c, json_integer((json_int_t)r->cpus[i].counts[b]));
		json_array_append_new(cpus, json_pack("{s:i, s:o}", "cpu", r->cpus[i].cpu, "counts", c));
	}
	for (size_t i = 0; i < r->nr_gaps; i++) {
		const struct gap *g = &r->gaps[i];
		json_array_append_new(gaps, json_pack("{s:I, s:I, s:i, s:s, s:s, s:I, s:I, s:s}", "start", (json_int_t)g->start,
						      "end", (json_int_t)g->end, "cpu", g->cpu, "reason", g->reason,
						      "source", g->source, "bytes", (json_int_t)g->bytes,
						      "records", (json_int_t)g->records, "detail", g->detail));
	}
	for (size_t i = 0; i < r->nr_slow; i++)
		json_array_append_new(slow, json_pack("{s:s, s:s, s:I, s:I}", "name", r->slow[i].name, "thread",
						      r->slow[i].thread, "start", (json_int_t)r->slow[i].start,
						      "duration", (json_int_t)r->slow[i].duration));
	char limits[512];
	snprintf(limits, sizeof(limits), "%zu distinct stacks%s; frames narrower than a third of a pixel are not drawn; "
		 "coverage in %d bins of %" PRIu64 " ns; %" PRIu64 " losses%s; the %d slowest calls.", stacks,
		 stacks > RB_REPORT_MAX_STACKS ? " (the 50000 heaviest drawn, the rest as [other stacks])" : "",
		 RB_REPORT_BINS, r->width, r->st.gaps,
		 r->st.gaps > RB_REPORT_MAX_GAPS ? " (the first 20000 marked)" : " (all marked)", RB_REPORT_SLOWEST);
	const char *unit = !r->st.from_trace ? "samples" : rb_folded_weighs_time(r->fold) ? "ns" : "branches";
	json_object_set_new(d, "name", json_string(name));
	json_t *it = json_string(info);
	json_object_set_new(d, "info", it ? it : json_string("(the info text is not UTF-8)"));
	json_object_set_new(d, "limits", json_string(limits));
	json_object_set_new(d, "unit", json_string(unit));
	json_object_set_new(d, "t0", json_integer((json_int_t)r->t0));
	json_object_set_new(d, "width", json_integer((json_int_t)r->width));
	json_object_set_new(d, "bins", json_integer(RB_REPORT_BINS));
	json_object_set_new(d, "cpus", cpus);
	json_object_set_new(d, "gaps", gaps);
	json_object_set_new(d, "folded", folded);
	json_object_set_new(d, "slowest", slow);
	return d;
fail:
	json_decref(folded);
	json_decref(d);
	json_decref(cpus);
	json_decref(gaps);
	json_decref(slow);
	return NULL;
}

int rb_report_write(struct rb_report *r, FILE *out, const char *name, const char *info)
{
	const char *at = strstr(PAGE, "@DATA@");
	json_t *d = page_data(r, name, info);
	char *s = d ? json_dumps(d, JSON_COMPACT) : NULL;
	json_decref(d);
	if (!s || !at)
		return free(s), -1;
	fwrite(PAGE, 1, (size_t)(at - PAGE), out);
	for (const char *p = s; *p; p++) {   /* '<' only occurs in strings: escaped, nothing can close the script */
		if (*p == '<')
			fputs("\\u003c", out);
		else
			fputc(*p, out);
	}
	fputs(at + strlen("@DATA@"), out);
	free(s);
	return ferror(out) ? -1 : 0;
}

void rb_report_free(struct rb_report *r)
{
	if (!r)
		return;
	rb_folded_free(r->fold);
	rb_calls_free(r->calls);
	free(r->path_sym);
	free(r->cpus);
	for (size_t i = 0; i < r->nr_gaps; i++) {
		free(r->gaps[i].reason);
		free(r->gaps[i].source);
		free(r->gaps[i].detail);
	}
	free(r->gaps);
	for (size_t i = 0; i < r->nr_slow; i++) {
		free(r->slow[i].name);
		free(r->slow[i].thread);
	}
	free(r);
}
