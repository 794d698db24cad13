/*
 * calls.c - see calls.h. One stack per thread key; each entry remembers the
 * thread's running branch, instruction and cycle sums when it was pushed,
 * so that a pop reports the differences. Call paths are interned in a
 * table of their own (struct pathtab), sized for the millions a long trace
 * makes.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "calls.h"
#include "idmap.h"
#include "decoder/source.h"

#define KERNEL_START (1ULL << 63)

struct centry {
	uint64_t id, cp, sym, parent_cp, parent_id, ret, call_time, call_ref;
	uint64_t branches0, insns0, cycles0;
	uint64_t child_time, child_branches;   /* of the calls it made, as they ended */
	uint8_t window;               /* ret is a call's address: a return lands within 15 bytes after it */
	uint8_t no_call, non_call, trace_end, kernel;
};

struct cstack {
	uint64_t thread, comm, branches, insns, cycles, last_time, trace_nr;
	struct centry *v;
	size_t n, cap;
};

/*
 * The call paths: (parent, sym, ip) -> id, ids given in order from 1. Every
 * path of a trace is here, and a long one can have millions (the export's
 * largest table), so the keys sit in one array by id and the hash table
 * holds 32-bit ids, filled to 3/4: about 30 bytes a path where an rb_idmap
 * takes 43 to 85, and doubling rebuilds the table from the keys. A
 * direct-mapped front copy answers the chains' shared roots, looked up
 * again and again, as rb_idmap_intern's does.
 */
struct pkey { uint64_t parent, sym, ip; };
struct pathtab {
	uint32_t *slot;               /* a path's id, 0: empty */
	size_t cap;                   /* slots, a power of 2 */
	struct pkey *keys;            /* keys[id - 1] */
	size_t n, cap_keys;
	struct rb_idkey *front;
};

struct rb_calls {
	struct rb_calls_out out;
	struct pathtab paths;         /* (parent, sym, ip) -> call path id */
	uint64_t root, last_path, last_call;
	struct rb_idmap threads;      /* thread key -> index in stacks + 1 */
	struct cstack **stacks;
	size_t nr_stacks, cap_stacks;
	struct rb_idmap trace_nr;     /* per trace queue (cpu, or tid when per thread): decoder restarts + 1 */
	uint64_t *gone_on;            /* per CPU: a thread that ended there, its calls open until another branches there */
	size_t nr_gone_on;
	/* the last branch's stack and trace_nr slot, for the next from the same thread and queue (most are) */
	struct cstack *hot_cs;        /* NULL once any stack is freed */
	uint64_t hot_thread;
	struct rb_idkey *hot_nr;      /* valid while trace_nr keeps its table (hot_nr_cap) */
	size_t hot_nr_cap;
	int32_t hot_cpu, hot_tid;
	int err;                      /* the first failure; nothing is emitted after it */
};

struct rb_calls *rb_calls_new(const struct rb_calls_out *out)
{
	struct rb_calls *c = calloc(1, sizeof(*c));
	if (c)
		c->out = *out;
	return c;
}

static int failed(struct rb_calls *c, int rc)
{
	if (!c->err)
		c->err = rc;
	return c->err;
}

static size_t path_home(const struct pathtab *t, uint64_t a, uint64_t b, uint64_t c)
{
	return (size_t)(rb_idmap_hash(a, b, c) >> 24) & (t->cap - 1);
}

static int path_grow(struct pathtab *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024;
	uint32_t *v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	free(t->slot);
	t->slot = v;
	t->cap = cap;
	for (size_t id = 1; id <= t->n; id++) {
		const struct pkey *k = &t->keys[id - 1];
		size_t i = path_home(t, k->parent, k->sym, k->ip);
		while (t->slot[i])
			i = (i + 1) & (cap - 1);
		t->slot[i] = (uint32_t)id;
	}
	return 0;
}

/* The id of path (a, b, c); a new one (*is_new) gets the next id. 0 when memory ran out. */
static uint64_t path_find(struct pathtab *t, uint64_t a, uint64_t b, uint64_t c, int *is_new)
{
	*is_new = 0;
	struct rb_idkey *f = NULL;
	if (t->front || (t->front = calloc(RB_IDMAP_FRONT_SLOTS, sizeof(*t->front)))) {
		f = &t->front[(rb_idmap_hash(a, b, c) >> 40) & (RB_IDMAP_FRONT_SLOTS - 1)];
		if (f->id && f->a == a && f->b == b && f->c == c)
			return f->id;
	}
	if ((t->n + 1) * 4 > t->cap * 3 && path_grow(t))
		return 0;
	size_t i = path_home(t, a, b, c);
	for (; t->slot[i]; i = (i + 1) & (t->cap - 1)) {
		const struct pkey *k = &t->keys[t->slot[i] - 1];
		if (k->parent == a && k->sym == b && k->ip == c)
			break;
	}
	uint64_t id = t->slot[i];
	if (!id) {
		if (t->n >= UINT32_MAX)
			return 0;
		if (t->n == t->cap_keys) {
			size_t n = t->cap_keys ? 2 * t->cap_keys : 1024;
			struct pkey *v = realloc(t->keys, n * sizeof(*v));
			if (!v)
				return 0;
			t->keys = v;
			t->cap_keys = n;
		}
		t->keys[t->n++] = (struct pkey){ a, b, c };
		id = t->n;
		t->slot[i] = (uint32_t)id;
		*is_new = 1;
	}
	if (f)
		*f = (struct rb_idkey){ .a = a, .b = b, .c = c, .id = id };
	return id;
}

/* perf's call_path__findnew: the address is kept only when there is no symbol */
uint64_t rb_calls_path(struct rb_calls *c, uint64_t parent, uint64_t sym, uint64_t ip)
{
	if (c->err)
		return 0;
	int is_new;
	uint64_t id = path_find(&c->paths, parent, sym, sym ? 0 : ip, &is_new);
	if (!id)
		return failed(c, -ENOMEM), 0;
	if (is_new) {
		c->last_path = id;
		int rc = c->out.path(c->out.ctx, id, parent, sym, sym ? 0 : ip);
		if (rc)
			return failed(c, rc), 0;
	}
	return id;
}

uint64_t rb_calls_root(struct rb_calls *c)
{
	if (!c->root)
		c->root = rb_calls_path(c, 0, 0, 0);
	return c->root;
}

static struct cstack *stack_of(struct rb_calls *c, uint64_t thread)
{
	struct rb_idkey *k = rb_idmap_get(&c->threads, thread, 0, 0);
	if (!k)
		return failed(c, -ENOMEM), NULL;
	if (k->id && c->stacks[k->id - 1])
		return c->stacks[k->id - 1];
	if (!k->id && c->nr_stacks == c->cap_stacks) {
		size_t n = c->cap_stacks ? 2 * c->cap_stacks : 64;
		struct cstack **v = realloc(c->stacks, n * sizeof(*v));
		if (!v)
			return failed(c, -ENOMEM), NULL;
		c->stacks = v;
		c->cap_stacks = n;
	}
	struct cstack *cs = calloc(1, sizeof(*cs));
	if (!cs)
		return failed(c, -ENOMEM), NULL;
	cs->thread = thread;
	if (!k->id)                    /* else its stack ended (rb_calls_thread_gone): a new one starts afresh */
		k->id = ++c->nr_stacks;
	c->stacks[k->id - 1] = cs;
	return cs;
}

static struct centry *cpush(struct rb_calls *c, struct cstack *cs, uint64_t sym, uint64_t addr, uint64_t ret,
			    uint64_t time, uint64_t ref)
{
	if (cs->n == cs->cap) {
		size_t n = cs->cap ? 2 * cs->cap : 64;
		struct centry *v = realloc(cs->v, n * sizeof(*v));
		if (!v)
			return failed(c, -ENOMEM), NULL;
		cs->v = v;
		cs->cap = n;
	}
	uint64_t parent = cs->n ? cs->v[cs->n - 1].cp : rb_calls_root(c);
	struct centry *e = &cs->v[cs->n];
	*e = (struct centry){ .id = ++c->last_call, .cp = rb_calls_path(c, parent, sym, addr), .sym = sym,
			      .parent_cp = parent, .parent_id = cs->n ? cs->v[cs->n - 1].id : 0, .ret = ret,
			      .call_time = time, .call_ref = ref, .branches0 = cs->branches,
			      .insns0 = cs->insns, .cycles0 = cs->cycles, .kernel = addr >= KERNEL_START };
	if (c->err)
		return NULL;
	cs->n++;
	if (c->out.enter) {
		int rc = c->out.enter(c->out.ctx, e->id, cs->thread, cs->comm, e->cp, sym, time);
		if (rc)
			return failed(c, rc), NULL;
	}
	return e;
}

/* The top entry returns (or not: @no_return) at @time, by branch @ref. */
static void cpop(struct rb_calls *c, struct cstack *cs, uint64_t time, uint64_t ref, int no_return)
{
	const struct centry *e = &cs->v[--cs->n];
	if (c->err)
		return;
	struct rb_call call = {
		.id = e->id, .thread = cs->thread, .comm = cs->comm, .path = e->cp, .parent_path = e->parent_cp,
		.parent_id = e->parent_id, .call_time = e->call_time, .return_time = time,
		.duration = time >= e->call_time ? time - e->call_time : 0, .call_ref = e->call_ref,
		.return_ref = ref, .branches = cs->branches - e->branches0, .insns = cs->insns - e->insns0,
		.cycles = cs->cycles - e->cycles0, .children_time = e->child_time, .children_branches = e->child_branches,
		.flags = (e->no_call ? RB_CALL_NO_CALL : 0) | (no_return ? RB_CALL_NO_RETURN : 0) |
			 (e->non_call ? RB_CALL_NON_CALL : 0),
	};
	if (cs->n) {             /* the caller, still open below it */
		cs->v[cs->n - 1].child_time += call.duration;
		cs->v[cs->n - 1].child_branches += call.branches;
	}
	int rc = c->out.call(c->out.ctx, &call);
	if (rc)
		failed(c, rc);
}

static void cpop_all(struct rb_calls *c, struct cstack *cs)
{
	while (cs->n > 0)
		cpop(c, cs, cs->last_time, 0, 1);
}

/* Thread @thread's calls end (as at the end) and its stack's memory goes. */
static void end_stack(struct rb_calls *c, uint64_t thread)
{
	uint64_t k = rb_idmap_find(&c->threads, thread, 0, 0);
	if (!k)
		return;
	struct cstack *cs = c->stacks[k - 1];
	if (!cs)
		return;
	cpop_all(c, cs);
	free(cs->v);
	free(cs);                      /* a thread per run, every run's thread gone: nothing of theirs stays */
	c->stacks[k - 1] = NULL;
	c->hot_cs = NULL;
}

int rb_calls_thread_gone(struct rb_calls *c, uint64_t thread, int32_t cpu)
{
	if (c->err || cpu < 0 || cpu >= 65536)
		return c->err;
	if ((size_t)cpu >= c->nr_gone_on) {
		size_t n = (size_t)cpu + 1;
		uint64_t *v = realloc(c->gone_on, n * sizeof(*v));
		if (!v)
			return 0;             /* the stack stays until the end: the same calls */
		memset(v + c->nr_gone_on, 0, (n - c->nr_gone_on) * sizeof(*v));
		c->gone_on = v;
		c->nr_gone_on = n;
	}
	uint64_t before = c->gone_on[cpu];
	c->gone_on[cpu] = thread;
	if (before && before != thread)
		end_stack(c, before);
	return c->err;
}

static void cpop_kernel(struct rb_calls *c, struct cstack *cs, uint64_t time, uint64_t ref)
{
	while (cs->n > 0 && cs->v[cs->n - 1].kernel)
		cpop(c, cs, time, ref, 1);
}

static int returns_to(const struct centry *e, uint64_t to)
{
	return !e->non_call && (e->window ? to > e->ret && to <= e->ret + 15 : e->ret == to);
}

/* perf's thread_stack__pop_cp: 0 when the return closed an entry. */
static int cpop_return(struct rb_calls *c, struct cstack *cs, uint64_t to, uint64_t time, uint64_t ref,
		       uint64_t from_sym)
{
	if (!cs->n)
		return 1;
	if (cs->n == 1 && cs->v[0].sym == from_sym) {
		cpop(c, cs, time, ref, 0);
		return 0;
	}
	for (size_t i = cs->n; i-- > 0;) {
		if (!returns_to(&cs->v[i], to))
			continue;
		while (cs->n > i + 1)
			cpop(c, cs, time, ref, 1);
		cpop(c, cs, time, ref, 0);
		return 0;
	}
	return 1;
}

/* perf's thread_stack__no_call_return: a return that matches no entry. */
static void creturn_unmatched(struct rb_calls *c, struct cstack *cs, const struct rb_calls_branch *b)
{
	struct centry *e;
	if (b->from >= KERNEL_START && b->to < KERNEL_START) {
		cpop_kernel(c, cs, b->time, b->ref);
		if (!cs->n) {
			if ((e = cpush(c, cs, b->to_sym, b->to, 0, b->time, b->ref)))
				e->no_call = 1;
			return;
		}
	} else if (cs->n && cs->v[cs->n - 1].kernel && b->from < KERNEL_START) {
		cpop_kernel(c, cs, b->time, b->ref);
	}
	uint64_t parent_sym = cs->n ? cs->v[cs->n - 1].sym : 0;
	if (parent_sym == b->from_sym) {
		/* at the bottom: the call was before the trace began; else a return used as a jump */
		if (cs->n == 1)
			cpop(c, cs, b->time, b->ref, 0);
		int bottom = !cs->n;
		if ((e = cpush(c, cs, b->to_sym, b->to, bottom ? b->to : 0, b->time, b->ref))) {
			e->no_call = 1;
			e->non_call = !bottom;
		}
		return;
	}
	/* the parent has not returned yet: push the target, then push and pop the source */
	if ((e = cpush(c, cs, b->to_sym, b->to, b->to, b->time, b->ref)))
		e->no_call = 1;
	if ((e = cpush(c, cs, b->from_sym, b->from, b->from, b->time, b->ref)))
		e->no_call = 1;
	if (e)
		cpop(c, cs, b->time, b->ref, 0);
}

static struct rb_idkey *trace_nr(struct rb_calls *c, int32_t cpu, int32_t tid)
{
	struct rb_idkey *nr = rb_idmap_get(&c->trace_nr, (uint64_t)(int64_t)cpu, cpu < 0 ? (uint64_t)tid : 0, 0);
	if (!nr)
		failed(c, -ENOMEM);
	return nr;
}

int rb_calls_restart(struct rb_calls *c, int32_t cpu, int32_t tid)
{
	if (c->err)
		return c->err;
	struct rb_idkey *nr = trace_nr(c, cpu, tid);
	if (nr)
		nr->id = nr->id ? nr->id + 1 : 2;
	return c->err;
}

int rb_calls_branch(struct rb_calls *c, const struct rb_calls_branch *b)
{
	if (c->err)
		return c->err;
	/* a thread that ended on this CPU: another's branch there means its trace is over */
	if (b->cpu >= 0 && (size_t)b->cpu < c->nr_gone_on && c->gone_on[b->cpu] && c->gone_on[b->cpu] != b->thread) {
		end_stack(c, c->gone_on[b->cpu]);
		c->gone_on[b->cpu] = 0;
		if (c->err)
			return c->err;
	}
	struct cstack *cs = c->hot_cs && c->hot_thread == b->thread ? c->hot_cs : stack_of(c, b->thread);
	struct rb_idkey *nr = NULL;
	if (cs && c->hot_nr && c->hot_cpu == b->cpu && c->hot_tid == b->tid && c->hot_nr_cap == c->trace_nr.cap)
		nr = c->hot_nr;
	else if (cs && (nr = trace_nr(c, b->cpu, b->tid))) {
		c->hot_nr = nr;
		c->hot_nr_cap = c->trace_nr.cap;
		c->hot_cpu = b->cpu;
		c->hot_tid = b->tid;
	}
	if (!nr)
		return c->err;
	if (c->hot_cs != cs) {          /* written on a change only: a store per branch costs more than it saves */
		c->hot_cs = cs;
		c->hot_thread = b->thread;
	}
	struct centry *e;
	if (!nr->id)
		nr->id = 1;
	if (cs->trace_nr != nr->id) {
		if (cs->trace_nr)
			cpop_all(c, cs);
		cs->trace_nr = nr->id;
	}
	/* an exec (a new comm of the main thread) ends every call */
	if (cs->comm != b->comm) {
		if (b->main_thread)
			cpop_all(c, cs);
		if (!cs->comm || b->main_thread)
			cs->comm = b->comm;
	}
	if (!cs->n && (b->from || b->to)) {
		uint64_t ip = b->from ? b->from : b->to;
		if ((e = cpush(c, cs, b->from ? b->from_sym : b->to_sym, ip, ip, b->time, b->ref)))
			e->no_call = 1;
	}
	cs->branches++;
	cs->insns += b->insns;
	cs->cycles += b->cycles;
	cs->last_time = b->time;
	uint32_t f = b->flags;
	if (f & RB_IP_FLAG_CALL) {
		if (!b->from || !b->to || (b->to > b->from && b->to <= b->from + 15))
			return c->err;
		if ((e = cpush(c, cs, b->to_sym, b->to, b->from, b->time, b->ref))) {
			e->window = 1;
			e->trace_end = !!(f & RB_IP_FLAG_TRACE_END);
		}
	} else if (f & RB_IP_FLAG_RETURN) {
		if (!b->to) {
			if (f & (RB_IP_FLAG_SYSCALLRET | RB_IP_FLAG_INTERRUPT))
				cpop_kernel(c, cs, b->time, b->ref);
			return c->err;
		}
		if (b->from && cpop_return(c, cs, b->to, b->time, b->ref, b->from_sym))
			creturn_unmatched(c, cs, b);
	} else if (f & RB_IP_FLAG_TRACE_BEGIN) {
		if (cs->n && cs->v[cs->n - 1].trace_end)
			cpop(c, cs, b->time, b->ref, 0);
	} else if (f & RB_IP_FLAG_TRACE_END) {
		if (cs->n >= 2 && (e = cpush(c, cs, 0, 0, b->from, b->time, b->ref))) {
			e->window = 1;
			e->trace_end = 1;
		}
	} else if ((f & RB_IP_FLAG_BRANCH) && b->from_sym != b->to_sym && b->to_sym && !b->to_off) {
		if ((e = cpush(c, cs, b->to_sym, b->to, 0, b->time, b->ref)))
			e->non_call = 1;
	}
	return c->err;
}

static int by_thread(const void *a, const void *b)
{
	const struct cstack *x = *(const struct cstack *const *)a, *y = *(const struct cstack *const *)b;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

int rb_calls_flush(struct rb_calls *c)
{
	size_t n = 0;              /* the stacks of threads gone are ended already */
	for (size_t t = 0; t < c->nr_stacks; t++)
		if (c->stacks[t])
			c->stacks[n++] = c->stacks[t];
	c->nr_stacks = n;
	if (c->nr_stacks)          /* (qsort with no array: undefined, says UBSan) */
		qsort(c->stacks, c->nr_stacks, sizeof(*c->stacks), by_thread);
	c->hot_cs = NULL;
	for (size_t t = 0; t < c->nr_stacks; t++) {
		struct cstack *cs = c->stacks[t];
		cpop_all(c, cs);
		free(cs->v);
		free(cs);
	}
	c->nr_stacks = 0;
	rb_idmap_free(&c->threads);
	return c->err;
}

int rb_calls_gap_restarts(const char *reason)
{
	static const char *const restarts[] = { "snapshot overwrite", "aux hole", "decoder lost sync", "no image" };
	for (size_t i = 0; i < sizeof(restarts) / sizeof(restarts[0]); i++)
		if (!strcmp(reason, restarts[i]))
			return 1;
	return 0;
}

int rb_calls_error(const struct rb_calls *c) { return c->err; }

void rb_calls_free(struct rb_calls *c)
{
	if (!c)
		return;
	for (size_t t = 0; t < c->nr_stacks; t++) {
		if (c->stacks[t])
			free(c->stacks[t]->v);
		free(c->stacks[t]);
	}
	free(c->stacks);
	rb_idmap_free(&c->threads);
	free(c->paths.slot);
	free(c->paths.keys);
	free(c->paths.front);
	rb_idmap_free(&c->trace_nr);
	free(c->gone_on);
	free(c);
}
