/*
 * folded.c - see folded.h. Stacks are kept as their final strings in a hash
 * map (string -> weight): memory grows with the distinct stacks, not with
 * the samples or branches. Trace stacks are first summed per (comm, call
 * path) as calls end, and turned into strings at the end.
 */
#include "config.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "folded.h"
#include "decoder/calls/calls.h"
#include "decoder/calls/idmap.h"
#include "store/trace_calls.h"

struct line { char *key; uint64_t weight; };
struct strmap { struct line *v; size_t cap, n; };

struct path { uint64_t parent, sym; };
struct agg { uint64_t comm, path, total, children, branches, child_branches; };

struct rb_folded {
	struct strmap samples, trace;
	struct rb_calls *calls;
	struct path *paths;           /* by call path id */
	size_t cap_paths;
	struct rb_idmap agg_ids;      /* (comm, path) -> index in aggs + 1 */
	struct agg *aggs;
	size_t nr_aggs, cap_aggs;
	char *buf;                    /* the stack being written */
	size_t len, cap_buf;
	struct line *out;             /* the chosen map's lines, sorted (rb_folded_write) */
	size_t nr_out;
	int from_trace, failed;
	int timed;                    /* some call took time: weights are ns, else branches */
	struct rb_machine *m;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

/* Adds @w to @key's weight (the key is copied when new). -1 when memory ran out. */
static int strmap_add(struct strmap *m, const char *key, uint64_t w)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 1024;
		struct line *v = calloc(cap, sizeof(*v));
		if (!v)
			return -1;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->v[i].key)
				continue;
			size_t j = (size_t)hash(m->v[i].key) & (cap - 1);
			while (v[j].key)
				j = (j + 1) & (cap - 1);
			v[j] = m->v[i];
		}
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	size_t j = (size_t)hash(key) & (m->cap - 1);
	while (m->v[j].key && strcmp(m->v[j].key, key))
		j = (j + 1) & (m->cap - 1);
	if (!m->v[j].key) {
		if (!(m->v[j].key = strdup(key)))
			return -1;
		m->n++;
	}
	m->v[j].weight += w;
	return 0;
}

static void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->v[i].key);
	free(m->v);
}

/* Appends @s to the stack being written; @frame: ';' in it becomes ':' (the separator), as perf's script. */
static int put(struct rb_folded *f, const char *s, int frame)
{
	size_t n = strlen(s);
	if (f->len + n + 2 > f->cap_buf) {
		size_t cap = 2 * (f->len + n + 2);
		char *b = realloc(f->buf, cap);
		if (!b)
			return -1;
		f->buf = b;
		f->cap_buf = cap;
	}
	for (size_t i = 0; i < n; i++)
		f->buf[f->len++] = frame && s[i] == ';' ? ':' : s[i];
	f->buf[f->len] = 0;
	return 0;
}

/* The stack's first element: the comm, spaces as '_' (FlameGraph splits the count off at a space). */
static int put_comm(struct rb_folded *f, const struct rb_comm *c)
{
	f->len = 0;
	if (put(f, c ? c->name : "[unknown]", 0))
		return -1;
	for (char *p = f->buf; *p; p++)
		if (*p == ' ')
			*p = '_';
	return 0;
}

/* A frame: its symbol's name, "[unknown]" for none or for the zero-size "unknown" perf's exporter adds. */
static int put_frame(struct rb_folded *f, const struct rb_sym *s)
{
	return put(f, ";", 0) || put(f, rb_trace_calls_name(s), 1) ? -1 : 0;
}

static int folded_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_folded *f = ctx;
	if (put_comm(f, rb_thread_shown_comm(ev->thread, ev->comm)))
		return f->failed = 1;
	for (size_t i = 0; i < ev->nr_nodes; i++)        /* root first */
		if (put_frame(f, ev->nodes[i].al.sym))
			return f->failed = 1;
	return strmap_add(&f->samples, f->buf, 1) ? (f->failed = 1) : 0;
}

static int on_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	struct rb_folded *f = ctx;
	(void)ip;
	if (id >= f->cap_paths) {
		size_t cap = id + 1 > 2 * f->cap_paths ? (size_t)id + 1 : 2 * f->cap_paths;
		struct path *v = realloc(f->paths, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->paths = v;
		f->cap_paths = cap;
	}
	f->paths[id] = (struct path){ parent, sym };
	return 0;
}

static struct agg *agg_of(struct rb_folded *f, uint64_t comm, uint64_t path)
{
	struct rb_idkey *k = rb_idmap_get(&f->agg_ids, comm, path, 0);
	if (!k)
		return NULL;
	if (!k->id) {
		if (f->nr_aggs == f->cap_aggs) {
			size_t cap = f->cap_aggs ? 2 * f->cap_aggs : 256;
			struct agg *v = realloc(f->aggs, cap * sizeof(*v));
			if (!v)
				return NULL;
			f->aggs = v;
			f->cap_aggs = cap;
		}
		f->aggs[f->nr_aggs++] = (struct agg){ .comm = comm, .path = path };
		k->id = f->nr_aggs;
	}
	return &f->aggs[k->id - 1];
}

/* A call ended: its time and branches, and those of the calls it made, to its (comm, path). */
static int on_call(void *ctx, const struct rb_call *c)
{
	struct rb_folded *f = ctx;
	struct agg *a = agg_of(f, c->comm, c->path);
	if (!a)
		return -ENOMEM;
	a->total += c->duration;
	a->branches += c->branches;
	a->children += c->children_time;
	a->child_branches += c->children_branches;
	f->timed |= c->duration != 0;
	return 0;
}

static int folded_branch(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_folded *f = ctx;
	struct rb_calls_branch b;
	if (!rb_trace_calls_branch(f->m, ev, &b))
		return 0;
	f->from_trace = 1;
	return rb_calls_branch(f->calls, &b) ? (f->failed = 1) : 0;
}

static int folded_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_folded *f = ctx;
	if (rb_calls_gap_restarts(g->reason) && rb_calls_restart(f->calls, g->cpu, g->tid))
		return f->failed = 1;
	return 0;
}

/* The stack of call path @id, root first, after the comm already in the buffer. */
static int put_path(struct rb_folded *f, uint64_t id)
{
	if (id >= f->cap_paths || !f->paths[id].parent)   /* the root (0, 0, 0): not a frame */
		return 0;
	if (put_path(f, f->paths[id].parent))
		return -1;
	return put_frame(f, (const struct rb_sym *)(uintptr_t)f->paths[id].sym);
}

/* The session ends (names alive): every call closed, and the trace's stacks made. */
static int folded_end(void *ctx)
{
	struct rb_folded *f = ctx;
	if (f->failed || rb_calls_flush(f->calls))
		return f->failed = 1;
	for (size_t i = 0; i < f->nr_aggs; i++) {
		const struct agg *a = &f->aggs[i];
		uint64_t all = f->timed ? a->total : a->branches, in_calls = f->timed ? a->children : a->child_branches;
		if (all <= in_calls)
			continue;
		if (put_comm(f, (const struct rb_comm *)(uintptr_t)a->comm) || put_path(f, a->path) ||
		    strmap_add(&f->trace, f->buf, all - in_calls))
			return f->failed = 1;
	}
	return 0;
}

static int folded_begin(void *ctx, struct rb_machine *m)
{
	((struct rb_folded *)ctx)->m = m;
	return 0;
}

struct rb_folded *rb_folded_new(void)
{
	struct rb_folded *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	struct rb_calls_out o = { .ctx = f, .path = on_path, .call = on_call };
	if (!(f->calls = rb_calls_new(&o))) {
		free(f);
		return NULL;
	}
	return f;
}

void rb_folded_sink(struct rb_folded *f, struct rb_sink *sink)
{
	*sink = (struct rb_sink){ .ctx = f, .begin = folded_begin, .sample = folded_sample, .trace = folded_branch, .gap = folded_gap,
				  .end = folded_end };
}

int rb_folded_from_trace(const struct rb_folded *f) { return f->from_trace; }

int rb_folded_weighs_time(const struct rb_folded *f) { return f->from_trace && f->timed; }

size_t rb_folded_lines(const struct rb_folded *f) { return f->from_trace ? f->trace.n : f->samples.n; }

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->key, ((const struct line *)b)->key);
}

int rb_folded_write(struct rb_folded *f, FILE *out)
{
	const struct strmap *m = f->from_trace ? &f->trace : &f->samples;
	free(f->out);
	f->nr_out = 0;
	if (!(f->out = malloc((m->n ? m->n : 1) * sizeof(*f->out))))
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i].key)
			f->out[f->nr_out++] = m->v[i];
	qsort(f->out, f->nr_out, sizeof(*f->out), by_key);
	for (size_t i = 0; i < f->nr_out; i++)
		fprintf(out, "%s %llu\n", f->out[i].key, (unsigned long long)f->out[i].weight);
	return ferror(out) ? -1 : 0;
}

void rb_folded_free(struct rb_folded *f)
{
	if (!f)
		return;
	strmap_free(&f->samples);
	strmap_free(&f->trace);
	rb_calls_free(f->calls);
	rb_idmap_free(&f->agg_ids);
	free(f->paths);
	free(f->aggs);
	free(f->buf);
	free(f->out);
	free(f);
}
