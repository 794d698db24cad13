/*
 * feed.c - see feed.h. One session thread (the producer) and the cursor's
 * thread (the consumer) meet at a queue of at most FEED_BATCHES batches of
 * FEED_ROWS rows: the session blocks while the queue is full, the cursor
 * while it is empty. Stopping early (the cursor closed, or the rows are
 * past the window's end) is a stop code the sink returns; the session then
 * ends as its contract says (end() called, nothing more delivered).
 * The session decodes with the export's own choices (--itrace, --time, -C:
 * feed.h), so that every event the export counted is counted here.
 *
 * Each wake-up is a futex call on both sides, and a whole-trace count's
 * cursor is faster than the decoding: woken at every batch, it would sleep
 * and wake 90 thousand times on a 64 MB trace. So a side that waits is
 * woken only when FEED_WAKE batches can pass: a session waiting for room
 * when that many were taken, a cursor waiting for rows when that many
 * wait (wake_at: 1 at first, doubled each time the cursor found none, so
 * the first rows of a query that stops early still come after one batch).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/rbtrace/feed.h"
#include "decoder/calls/idmap.h"
#include "decoder/calls/calls.h"
#include "decoder/session/machine.h"

#define FEED_ROWS 512
#define FEED_BATCHES 8
#define FEED_WAKE 4            /* batches a waiting side lets pass before it is woken (at most) */
#define FEED_STOP 0x7e5d       /* the sink's stop code: the cursor asked, or the window is over */
#define FEED_RESEEK 0x7e5e     /* the seek points did not lead where the export went: from the start */

/* FEED_ROWS rows: a branch's values, or a call's, and the objects a branch names (unless lean). */
struct batch {
	size_t n;
	struct rb_feed_obj *gap[FEED_ROWS];        /* not a row: a loss */
	union {
		struct rb_feed_branch b[FEED_ROWS];
		struct rb_feed_call c[FEED_ROWS];
	} u;
	struct rb_feed_names names[FEED_ROWS];
};

struct rb_feed {
	struct rb_session_opts so;
	struct rb_feed_filter flt;
	pthread_t thread;
	int started;
	/*
	 * Feeds whose rows one cursor reads (rb_feed_start's @with) share the
	 * first one's lock and condition (mu, cv: own_mu, own_cv of the
	 * lead); the cursor's side is the lead's (taking ... turn).
	 */
	pthread_mutex_t own_mu, *mu;
	pthread_cond_t own_cv, *cv;
	struct rb_feed *lead, *other;      /* other: the lead's second feed, if any */
	struct batch *queue[FEED_BATCHES]; /* ring of full batches */
	size_t head, count;
	struct batch *filling;             /* the session's */
	struct batch *spare[FEED_BATCHES + 2]; /* emptied batches, for the session to fill again: rows stay in */
	size_t nspare;                     /* memory the caches hold, never new pages */
	int stop;                          /* the cursor asked the session to stop */
	int session_waits;                 /* for room */
	struct batch *taking;              /* the lead: the cursor's batch, of taking_from */
	struct rb_feed *taking_from;
	struct rb_feed_rows view;          /* the cursor's view of it */
	int cursor_waits;                  /* for rows */
	size_t wake_at;                    /* batches that wake the cursor */
	int turn;                          /* whose batch the cursor takes next (0: the lead's) */
	int led;                           /* the cursor took a batch (the lead's first, always) */
	int done;                          /* the session ended: status, msg */
	int status;
	char msg[512];
	/* the session thread's */
	struct rb_machine *m;
	uint64_t next_id;                  /* the samples id of the next sample or trace event */
	struct rb_idmap objmap;            /* session object -> index + 1 in objs */
	struct rb_feed_obj **objs;
	size_t nobjs, capobjs;
	int failed;                        /* out of memory */
	struct rb_calls *calls;            /* RB_FEED_CALLS: the builder */
	uint32_t *queues;                  /* the filter's, copied */
	uint8_t *passed;                   /* per queue: an event past the window came */
	size_t npassed;
	struct rb_seek_ev *seek;           /* the filter's, copied */
	uint64_t *seek_seq;
	size_t nseek;
	size_t seek_met;                   /* of them, delivered so far */
	int waiting;                       /* before the last seek point: nothing counts */
	/*
	 * A scan in two parts: the event with samples id meet_id (the first
	 * part's id_hi + 1, where it stops; the second's id_lo + 1, its first)
	 * as each decoding saw it. The two are the same event unless the
	 * seek point's sample_seq is not what decoding from the start counts
	 * there (rb_feed_next: then the rows are not the export's ids).
	 */
	uint64_t meet_id;
	int met;
	struct { int kind; int32_t cpu; uint64_t time, from, to; } meet;
};

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

/* The record of session object @p (kind, generation @gen): made on first sight. NULL: out of memory. */
static struct rb_feed_obj *obj_of(struct rb_feed *f, const void *p, int kind, uint64_t gen, int *fresh)
{
	struct rb_idkey *k = rb_idmap_get(&f->objmap, (uint64_t)(uintptr_t)p, (uint64_t)kind, gen);
	if (!k)
		return NULL;
	*fresh = 0;
	if (k->id)
		return f->objs[k->id - 1];
	if (f->nobjs == f->capobjs) {
		size_t cap = f->capobjs ? 2 * f->capobjs : 256;
		struct rb_feed_obj **v = realloc(f->objs, cap * sizeof(*v));
		if (!v)
			return NULL;
		f->objs = v;
		f->capobjs = cap;
	}
	struct rb_feed_obj *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->kind = kind;
	o->key = f->nobjs + 1;
	f->objs[f->nobjs++] = o;
	k->id = f->nobjs;
	*fresh = 1;
	return o;
}

static struct rb_feed_obj *thread_obj(struct rb_feed *f, const struct rb_thread *t)
{
	int fresh;
	struct rb_feed_obj *o = obj_of(f, t, RB_OBJ_THREAD, t->generation, &fresh);
	if (o && fresh) {
		o->pid = t->pid;
		o->tid = t->tid;
		o->a = t->generation;
	}
	return o;
}

static struct rb_feed_obj *comm_obj(struct rb_feed *f, const struct rb_comm *c, const struct rb_thread *t)
{
	int fresh;
	struct rb_feed_obj *o = obj_of(f, c, RB_OBJ_COMM, 0, &fresh);
	if (o && fresh) {
		o->pid = t->pid;
		o->a = c->start;
		o->b = (uint64_t)c->exec;
		if (!(o->name = dup_str(c->name)))
			return NULL;
	}
	return o;
}

static struct rb_feed_obj *dso_obj(struct rb_feed *f, const struct rb_dso *d)
{
	int fresh;
	struct rb_feed_obj *o = obj_of(f, d, RB_OBJ_DSO, 0, &fresh);
	if (o && fresh) {
		char bid[41] = "";
		for (int i = 0; i < d->build_id_size && i < 20; i++)
			sprintf(bid + 2 * i, "%02x", d->build_id[i]);
		if (!(o->name = dup_str(d->long_name)) || !(o->build_id = dup_str(bid)))
			return NULL;
	}
	return o;
}

static struct rb_feed_obj *sym_obj(struct rb_feed *f, const struct rb_sym *s, struct rb_feed_obj *dso)
{
	int fresh;
	struct rb_feed_obj *o = obj_of(f, s, RB_OBJ_SYM, 0, &fresh);
	if (o && fresh) {
		o->a = s->start;
		o->b = s->end;
		o->dso = dso;
		if (!(o->name = dup_str(s->name)))
			return NULL;
	}
	return o;
}

static struct rb_feed_obj *evsel_obj(struct rb_feed *f, const char *mods)
{
	static const char key;          /* one record per modifier string the decoder uses */
	int fresh;
	struct rb_feed_obj *o = obj_of(f, &key, RB_OBJ_EVSEL, (uint64_t)(uintptr_t)mods, &fresh);
	if (o && fresh) {
		char name[32];
		snprintf(name, sizeof(name), "branches%s", mods ? mods : "");
		if (!(o->name = dup_str(name)))
			return NULL;
	}
	return o;
}

static int calls_failed(struct rb_feed *f);

/*
 * An address's object, symbol and offset, as the store's export_al finds
 * them (a symbol-less address named "unknown" at @unknown_at). 0, or -1 out
 * of memory.
 */
static int locate(struct rb_feed *f, const struct rb_addr_loc *al, uint64_t unknown_at, struct rb_feed_obj **dso,
		  struct rb_feed_obj **sym, int64_t *off)
{
	*dso = *sym = NULL;
	*off = 0;
	if (!al->map)
		return 0;
	if (!(*dso = dso_obj(f, al->dso)))
		return -1;
	const struct rb_sym *s = rb_machine_export_sym(f->m, al, unknown_at);
	if (!s)
		return 0;
	if (!(*sym = sym_obj(f, s, *dso)))
		return -1;
	*off = al->addr >= s->start ? (int64_t)(al->addr - s->start) : 0;
	return 0;
}

/* Hand the filled batch over; wait while the queue is full. FEED_STOP when the cursor asked to stop. */
static int push_batch(struct rb_feed *f)
{
	pthread_mutex_lock(f->mu);
	while (f->count == FEED_BATCHES && !f->stop) {
		f->session_waits = 1;
		pthread_cond_wait(f->cv, f->mu);
	}
	f->session_waits = 0;
	if (f->stop) {
		pthread_mutex_unlock(f->mu);
		return FEED_STOP;
	}
	f->queue[(f->head + f->count) % FEED_BATCHES] = f->filling;
	f->count++;
	f->filling = f->nspare ? f->spare[--f->nspare] : NULL;
	if (f->lead->cursor_waits && f->count >= f->lead->wake_at)
		pthread_cond_broadcast(f->cv);
	pthread_mutex_unlock(f->mu);
	if (!f->filling && !(f->filling = malloc(sizeof(*f->filling))))
		return f->failed = 1, -ENOMEM;
	f->filling->n = 0;
	return 0;
}

/* Queue @q's events are past the window: FEED_STOP once every queue that can have some in it is. */
static int past_window(struct rb_feed *f, uint32_t q)
{
	size_t i;
	for (i = 0; i < f->flt.nqueues && f->flt.queues[i] != q; i++)
		;
	if (i == f->flt.nqueues || f->passed[i])
		return 0;
	f->passed[i] = 1;
	return ++f->npassed == f->flt.nqueues ? FEED_STOP : 0;
}

/* A call path: the database has it already (the export made the same ones in the same order). */
static int no_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	(void)ctx, (void)id, (void)parent, (void)sym, (void)ip;
	return 0;
}

/* The builder failed: memory, or a row could not be handed over (the cursor stopped). */
static int calls_failed(struct rb_feed *f)
{
	int rc = rb_calls_error(f->calls);
	if (rc == -ENOMEM)
		f->failed = 1;
	return rc ? rc : -ENOMEM;
}

static int feed_begin(void *ctx, struct rb_machine *m)
{
	struct rb_feed *f = ctx;
	f->m = m;
	return 0;
}

/*
 * Before the last seek point, events are the export's before the window:
 * none counts; a branch already in the window means this decoding is not
 * the export's.
 */
static int feed_waiting(struct rb_feed *f, const struct rb_trace_ev *ev)
{
	if (ev && ev->kind == RB_EV_BRANCH && ev->time >= (f->flt.seek_lo ? f->flt.seek_lo : f->flt.time_lo))
		return FEED_RESEEK;
	return f->stop ? FEED_STOP : 0;
}

/* A seek point: when it is the last of the filter's, ids go on from its samples id. */
static int feed_seek_point(void *ctx, const struct rb_seek_ev *s)
{
	struct rb_feed *f = ctx;
	if (!f->waiting)
		return 0;
	for (size_t i = 0; i < f->nseek; i++)
		if (f->seek[i].queue == s->queue && f->seek[i].pos == s->pos && f->seek[i].time == s->time &&
		    ++f->seek_met == f->nseek) {
			f->waiting = 0;
			f->next_id = f->seek_seq[i];
		}
	return 0;
}

static int feed_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_feed *f = ctx;
	if (f->waiting)
		return feed_waiting(f, NULL);
	f->next_id++;
	if (f->calls && ev->nr_nodes) {      /* its call chain's paths, as the store makes them */
		uint64_t cp = rb_calls_root(f->calls);
		for (size_t i = 0; cp && i < ev->nr_nodes; i++) {
			struct rb_feed_obj *dso, *sym;
			int64_t off;
			if (locate(f, &ev->nodes[i].al, ev->nodes[i].ip, &dso, &sym, &off) < 0)
				return f->failed = 1, -ENOMEM;
			cp = rb_calls_path(f->calls, cp, sym ? sym->key : 0, ev->nodes[i].ip);
		}
		if (!cp)
			return calls_failed(f);
	}
	return f->stop ? FEED_STOP : 0;
}

/* A branch into the calls builder, as the store's calls_branch gives it (@id its samples id). */
static __attribute__((noinline)) int call_branch(struct rb_feed *f, const struct rb_trace_ev *ev, uint64_t id)
{
	struct rb_feed_obj *thread = thread_obj(f, ev->thread), *comm = NULL, *dso, *sym, *to_dso, *to_sym;
	int64_t off, to_off;
	if (!thread || (ev->comm && !(comm = comm_obj(f, ev->comm, ev->thread))) ||
	    locate(f, &ev->from_al, ev->from_al.addr, &dso, &sym, &off) < 0 ||
	    locate(f, &ev->to_al, ev->to_al.addr, &to_dso, &to_sym, &to_off) < 0)
		return f->failed = 1, -ENOMEM;
	if (!ev->flags)
		return 0;
	struct rb_calls_branch b = { .thread = thread->key, .comm = comm ? comm->key : 0,
				     .main_thread = ev->thread == ev->main_thread, .cpu = ev->cpu,
				     .tid = ev->thread->tid, .time = ev->time, .from = ev->from, .to = ev->to,
				     .flags = ev->flags, .insns = ev->insn_count, .cycles = ev->cyc_count,
				     .from_sym = sym ? sym->key : 0, .to_sym = to_sym ? to_sym->key : 0,
				     .to_off = (uint64_t)to_off, .ref = id };
	return rb_calls_branch(f->calls, &b) ? calls_failed(f) : 0;
}

/* The objects branch @ev names, for a query that reads them (not lean). 0, or -1 out of memory. */
static __attribute__((noinline)) int branch_names(struct rb_feed *f, const struct rb_trace_ev *ev,
						  struct rb_feed_names *r)
{
	memset(r, 0, sizeof(*r));
	if (!(r->evsel = evsel_obj(f, ev->mods)) || (ev->thread && !(r->thread = thread_obj(f, ev->thread))) ||
	    (ev->comm && ev->thread && !(r->comm = comm_obj(f, ev->comm, ev->thread))) ||
	    locate(f, &ev->from_al, ev->from_al.addr, &r->dso, &r->sym, &r->sym_offset) < 0 ||
	    locate(f, &ev->to_al, ev->to_al.addr, &r->to_dso, &r->to_sym, &r->to_sym_offset) < 0)
		return -1;
	return 0;
}

static int feed_trace(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_feed *f = ctx;
	const struct rb_feed_filter *w = &f->flt;
	if (f->waiting)
		return feed_waiting(f, ev);
	int64_t id = (int64_t)++f->next_id;
	if ((uint64_t)id == f->meet_id && !f->met) {
		f->met = 1;
		f->meet.kind = ev->kind;
		f->meet.cpu = ev->cpu;
		f->meet.time = ev->time;
		f->meet.from = ev->from;
		f->meet.to = ev->to;
	}
	if (ev->kind != RB_EV_BRANCH)
		return 0;
	if (f->calls)
		return ev->thread ? call_branch(f, ev, (uint64_t)id) : 0;
	if ((uint64_t)id <= w->id_lo)
		return 0;
	if (w->id_hi && (uint64_t)id > w->id_hi)
		return FEED_STOP;       /* the other part's */
	if (ev->time > w->time_hi)
		return past_window(f, ev->queue);
	if (ev->time < w->time_lo || (w->cpu >= 0 && ev->cpu != w->cpu) ||
	    (w->pid >= 0 && (!ev->thread || ev->thread->pid != w->pid)) ||
	    (w->tid >= 0 && (!ev->thread || ev->thread->tid != w->tid)))
		return 0;
	struct batch *bt = f->filling;
	bt->gap[bt->n] = NULL;
	bt->u.b[bt->n] = (struct rb_feed_branch){
		.id = id, .ip = (int64_t)ev->from, .to_ip = (int64_t)ev->to, .time = (int64_t)ev->time,
		.insn_count = (int64_t)ev->insn_count, .cyc_count = (int64_t)ev->cyc_count, .flags = ev->flags,
		.cpu = ev->cpu, .pid = ev->thread ? (int32_t)ev->thread->pid : -1,
		.tid = ev->thread ? (int32_t)ev->thread->tid : -1 };
	if (!w->lean && branch_names(f, ev, &bt->names[bt->n]) < 0)
		return f->failed = 1, -ENOMEM;
	if (++bt->n == FEED_ROWS)
		return push_batch(f);
	return f->stop ? FEED_STOP : 0;
}

/* A call that ended: a row, unless outside the filter (its call time in the window, its thread). */
static int feed_call(void *ctx, const struct rb_call *c)
{
	struct rb_feed *f = ctx;
	const struct rb_feed_filter *w = &f->flt;
	struct rb_feed_obj *thread = c->thread ? f->objs[c->thread - 1] : NULL;
	if (c->call_time < w->time_lo || c->call_time > w->time_hi ||
	    (w->pid >= 0 && (!thread || thread->pid != w->pid)) || (w->tid >= 0 && (!thread || thread->tid != w->tid)))
		return f->stop ? FEED_STOP : 0;
	struct batch *bt = f->filling;
	bt->gap[bt->n] = NULL;
	struct rb_feed_call *r = &bt->u.c[bt->n];
	int64_t *v = r->v;
	memset(v, 0, sizeof(r->v));
	r->thread = thread;
	r->comm = c->comm ? f->objs[c->comm - 1] : NULL;
	v[RCC_ID] = (int64_t)c->id;
	v[RCC_CALL_PATH] = (int64_t)c->path;
	v[RCC_CALL_TIME] = (int64_t)c->call_time;
	v[RCC_RETURN_TIME] = (int64_t)c->return_time;
	v[RCC_BRANCH_COUNT] = (int64_t)c->branches;
	v[RCC_CALL_ID] = (int64_t)c->call_ref;
	v[RCC_RETURN_ID] = (int64_t)c->return_ref;
	v[RCC_PARENT_CALL_PATH] = (int64_t)c->parent_path;
	v[RCC_FLAGS] = c->flags;
	v[RCC_PARENT_ID] = (int64_t)c->parent_id;
	v[RCC_INSN_COUNT] = (int64_t)c->insns;
	v[RCC_CYC_COUNT] = (int64_t)c->cycles;
	v[RCC_PID] = thread ? thread->pid : -1;
	v[RCC_TID] = thread ? thread->tid : -1;
	if (++f->filling->n == FEED_ROWS)
		return push_batch(f);
	return f->stop ? FEED_STOP : 0;
}

/*
 * A loss: handed to the cursor, which checks that the export met it too
 * (else the decoding lacks something it had: a binary, say). A decoder
 * restart ends the calls open on its queue at its next branch, as in the
 * store.
 */
static int feed_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_feed *f = ctx;
	if (f->waiting)
		return feed_waiting(f, NULL);
	if (f->calls && rb_calls_gap_restarts(g->reason) && rb_calls_restart(f->calls, g->cpu, g->tid))
		return calls_failed(f);
	int fresh;
	struct rb_feed_obj *o = obj_of(f, g, RB_OBJ_GAP, f->nobjs, &fresh);  /* a record of its own */
	if (!o || !(o->name = dup_str(g->reason)) || !(o->build_id = dup_str(g->detail)))
		return f->failed = 1, -ENOMEM;
	o->pid = g->cpu;
	o->a = g->time_start;
	o->b = g->time_end;
	f->filling->gap[f->filling->n] = o;
	if (++f->filling->n == FEED_ROWS)
		return push_batch(f);
	return f->stop ? FEED_STOP : 0;
}

static int feed_end(void *ctx)
{
	struct rb_feed *f = ctx;
	if (f->waiting)                 /* a seek point never met */
		return f->stop ? 0 : FEED_RESEEK;
	if (f->calls && !f->stop && rb_calls_flush(f->calls))
		return calls_failed(f);
	return f->filling->n && !f->stop ? push_batch(f) : 0;
}

/* Back to before a decoding that handed nothing over: its objects' records go (the session's die with it). */
static void free_objs(struct rb_feed *f)
{
	for (size_t i = 0; i < f->nobjs; i++) {
		free(f->objs[i]->name);
		free(f->objs[i]->build_id);
		free(f->objs[i]);
	}
	f->nobjs = 0;
	rb_idmap_free(&f->objmap);
}

static void feed_reset(struct rb_feed *f)
{
	free_objs(f);
	memset(&f->objmap, 0, sizeof(f->objmap));
	f->next_id = 0;
	f->npassed = 0;
	memset(f->passed, 0, f->flt.nqueues + 1);
	f->filling->n = 0;
	f->waiting = 0;
	f->so.seek = NULL;
	f->so.nr_seek = 0;
}

/* A thread that exited, switched out for good: its calls can end (rb_calls_thread_gone), as in the export. */
static int feed_switch(void *ctx, const struct rb_switch_ev *ev)
{
	struct rb_feed *f = ctx;
	const struct rb_thread *gone = ev->out ? ev->a : NULL;      /* OUT records: only they say preempted */
	uint64_t k = f->calls && gone && gone->dead && !ev->preempt
		     ? rb_idmap_find(&f->objmap, (uint64_t)(uintptr_t)gone, RB_OBJ_THREAD, gone->generation) : 0;
	if (k && rb_calls_thread_gone(f->calls, f->objs[k - 1]->key, ev->cpu))
		return calls_failed(f);
	return f->stop ? FEED_STOP : 0;
}

static void *feed_main(void *arg)
{
	struct rb_feed *f = arg;
	struct rb_sink sink = { .ctx = f, .begin = feed_begin, .sample = feed_sample, .trace = feed_trace,
				.context_switch = feed_switch, .gap = feed_gap,
				.seek_point = f->nseek ? feed_seek_point : NULL, .end = feed_end };
	struct rb_session_stats stats;
	struct pd_error err;
	memset(&stats, 0, sizeof(stats));
	memset(&err, 0, sizeof(err));
	int rc = rb_session_run(&f->so, &sink, &stats, &err);
	int debug = getenv("RBTRACE_DEBUG") != NULL;
	if (debug && f->nseek)
		fprintf(stderr, "rbtrace: %zu queue(s) started at seek points\n", f->nseek);
	if (f->so.nr_seek && !f->failed && (rc == FEED_RESEEK || stats.seek_failed)) {
		if (debug)
			fprintf(stderr, "rbtrace: the seek points did not lead where the export went: from the start\n");
		feed_reset(f);                  /* nothing was handed over: decode from the start */
		sink.seek_point = NULL;
		memset(&stats, 0, sizeof(stats));
		memset(&err, 0, sizeof(err));
		rc = rb_session_run(&f->so, &sink, &stats, &err);
	}
	pthread_mutex_lock(f->mu);
	if (f->failed) {
		f->status = -ENOMEM;
		snprintf(f->msg, sizeof(f->msg), "out of memory while decoding %s", f->so.path);
	} else if (rc && rc != FEED_STOP) {
		f->status = rc;
		snprintf(f->msg, sizeof(f->msg), "%s", err.msg[0] ? err.msg : "decoding the recording failed");
	} else if (rc != FEED_STOP && (stats.stop.code || stats.malformed)) {
		f->status = stats.stop.code ? stats.stop.code : -1;
		snprintf(f->msg, sizeof(f->msg), "%s was read in part: %s", f->so.path,
			 stats.stop.code ? stats.stop.msg : "malformed records were skipped");
	}
	f->done = 1;
	pthread_cond_broadcast(f->cv);
	pthread_mutex_unlock(f->mu);
	return NULL;
}

/* Free what feed @f holds (its thread has ended or never started). */
static void feed_free(struct rb_feed *f)
{
	for (size_t i = 0; i < f->count; i++)
		free(f->queue[(f->head + i) % FEED_BATCHES]);
	free(f->filling);
	for (size_t i = 0; i < f->nspare; i++)
		free(f->spare[i]);
	free_objs(f);
	free(f->objs);
	rb_calls_free(f->calls);
	free(f->queues);
	free(f->passed);
	free(f->seek);
	free(f->seek_seq);
	pthread_mutex_destroy(&f->own_mu);
	pthread_cond_destroy(&f->own_cv);
	free(f);
}

/* Stop @f's session and wait for its thread. */
static void feed_halt(struct rb_feed *f)
{
	if (!f->started)
		return;
	pthread_mutex_lock(f->mu);
	f->stop = 1;
	pthread_cond_broadcast(f->cv);
	pthread_mutex_unlock(f->mu);
	pthread_join(f->thread, NULL);
	f->started = 0;
}

int rb_feed_start(struct rb_feed **out, const struct rb_session_opts *so, const struct rb_feed_filter *flt,
		  struct rb_feed *with, char *msg, size_t msglen)
{
	struct rb_feed *f = calloc(1, sizeof(*f));
	*out = NULL;
	if (!f || !(f->filling = malloc(sizeof(*f->filling)))) {
		free(f);
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	f->filling->n = 0;
	pthread_mutex_init(&f->own_mu, NULL);
	pthread_cond_init(&f->own_cv, NULL);
	f->lead = with ? with : f;
	f->mu = &f->lead->own_mu;
	f->cv = &f->lead->own_cv;
	f->so = *so;
	f->flt = *flt;
	f->meet_id = flt->id_hi ? flt->id_hi + 1 : flt->id_lo ? flt->id_lo + 1 : 0;
	f->so.no_symbols = flt->lean;      /* no column of its rows names an object: no symbol is looked up */
	f->queues = malloc((flt->nqueues + 1) * sizeof(*f->queues));
	f->passed = calloc(flt->nqueues + 1, 1);
	if (!f->queues || !f->passed) {
		snprintf(msg, msglen, "out of memory");
		feed_free(f);
		return -1;
	}
	if (flt->nqueues)
		memcpy(f->queues, flt->queues, flt->nqueues * sizeof(*f->queues));
	f->flt.queues = f->queues;
	if (flt->nseek && flt->table == RB_FEED_BRANCHES) {
		f->seek = malloc(flt->nseek * sizeof(*f->seek));
		f->seek_seq = malloc(flt->nseek * sizeof(*f->seek_seq));
		if (!f->seek || !f->seek_seq) {
			snprintf(msg, msglen, "out of memory");
			feed_free(f);
			return -1;
		}
		memcpy(f->seek, flt->seek, flt->nseek * sizeof(*f->seek));
		memcpy(f->seek_seq, flt->seek_seq, flt->nseek * sizeof(*f->seek_seq));
		f->nseek = flt->nseek;
		f->waiting = 1;
		f->so.seek = f->seek;
		f->so.nr_seek = f->nseek;
	}
	f->flt.seek = NULL;
	f->flt.seek_seq = NULL;
	struct rb_calls_out co = { .ctx = f, .path = no_path, .call = feed_call };
	if (flt->table == RB_FEED_CALLS && !(f->calls = rb_calls_new(&co))) {
		snprintf(msg, msglen, "out of memory");
		feed_free(f);
		return -1;
	}
	int e = pthread_create(&f->thread, NULL, feed_main, f);
	if (e) {
		snprintf(msg, msglen, "cannot start a decoding thread: %s", strerror(e));
		feed_free(f);
		return -1;
	}
	f->started = 1;
	if (with) {
		pthread_mutex_lock(f->mu);
		with->other = f;
		pthread_mutex_unlock(f->mu);
	}
	*out = f;
	return 0;
}

/* Whether a scan's two parts met at different events (@msg says so), both having ended. */
static int meet_differs(const struct rb_feed *a, const struct rb_feed *b, char *msg, size_t msglen)
{
	if (a->met == b->met && (!a->met || (a->meet.kind == b->meet.kind && a->meet.cpu == b->meet.cpu &&
					     a->meet.time == b->meet.time && a->meet.from == b->meet.from &&
					     a->meet.to == b->meet.to)))
		return 0;
	snprintf(msg, msglen, "trace_seek's sample_seq %" PRIu64 " is not the samples id that decoding from the start "
		 "reaches at that seek point: the database's trace_seek does not match this recording "
		 "(RBTRACE_NO_SPLIT=1 decodes the whole trace from its start)", a->meet_id - 1);
	return 1;
}

const struct rb_feed_rows *rb_feed_next(struct rb_feed *f, int *status, char *msg, size_t msglen)
{
	*status = 0;
	pthread_mutex_lock(f->mu);
	if (f->taking) {               /* give the emptied batch back */
		struct rb_feed *o = f->taking_from;
		o->spare[o->nspare++] = f->taking;
		f->taking = NULL;
	}
	for (int bumped = 0;;) {
		/* a batch, the feeds' in turn; a feed that ended with an error once its batches are read */
		struct rb_feed *m[2] = { f->turn ? f->other : f, f->turn ? f : f->other }, *pick = NULL;
		if (!f->led && (f->count || !f->done))
			m[1] = NULL;    /* the lead's first batch first: a query that stops early (LIMIT) gets the lowest ids */
		int live = 0, ended = 0;
		for (int k = 0; k < 2; k++) {
			if (!m[k])
				continue;
			ended += m[k]->done;
			if (m[k]->count && !pick)
				pick = m[k];
			else if (!m[k]->count && m[k]->done && m[k]->status && !*status) {
				*status = m[k]->status;
				snprintf(msg, msglen, "%s", m[k]->msg);
			}
			live |= !m[k]->done;
		}
		if (pick) {
			*status = 0;
			f->taking = pick->queue[pick->head];
			f->taking_from = pick;
			pick->head = (pick->head + 1) % FEED_BATCHES;
			pick->count--;
			if (pick->session_waits && pick->count <= FEED_BATCHES - FEED_WAKE)
				pthread_cond_broadcast(f->cv);
			if (f->other)
				f->turn = pick == f;
			f->led = 1;
			break;
		}
		if (!*status && !live && f->other && meet_differs(f, f->other, msg, msglen))
			*status = -EINVAL;
		if (*status || !live)
			break;
		/* none waits: sleep until wake_at batches of one feed do, or a feed ends */
		if (!bumped++)
			f->wake_at = !f->wake_at ? 1 : 2 * f->wake_at < FEED_WAKE ? 2 * f->wake_at : FEED_WAKE;
		f->cursor_waits = 1;
		for (;;) {
			pthread_cond_wait(f->cv, f->mu);
			int now = 0, enough = 0;
			for (int k = 0; k < 2; k++)
				if (m[k]) {
					now += m[k]->done;
					enough |= m[k]->count >= f->wake_at;
				}
			if (enough || now != ended)
				break;
		}
		f->cursor_waits = 0;
	}
	pthread_mutex_unlock(f->mu);
	if (!f->taking)
		return NULL;
	struct batch *bt = f->taking;
	f->view = (struct rb_feed_rows){ .n = bt->n, .gap = bt->gap, .b = bt->u.b, .c = bt->u.c,
					 .names = f->flt.lean ? NULL : bt->names };
	return &f->view;
}

void rb_feed_stop(struct rb_feed *f)
{
	if (!f)
		return;
	struct rb_feed *other = f->other;
	if (other)
		feed_halt(other);
	feed_halt(f);
	if (f->taking) {
		struct rb_feed *o = f->taking_from;
		o->spare[o->nspare++] = f->taking;
		f->taking = NULL;
	}
	if (other)
		feed_free(other);
	feed_free(f);
}
