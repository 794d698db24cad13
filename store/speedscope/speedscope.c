/*
 * speedscope.c - see speedscope.h. A profile ("track") per thread (trace),
 * per thread and event (samples), or per CPU (losses no thread is known
 * for). A track's JSON text goes into a buffer that is appended to the
 * spool file as a block when full; the blocks of a track are found again by
 * their offsets at the end.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "speedscope.h"
#include "decoder/calls/idmap.h"
#include "store/trace_calls.h"

#define BLOCK 4096

struct blk { uint64_t off; size_t len; };
struct stream {               /* a JSON array's items, written as they come */
	char *buf;
	size_t len;
	struct blk *blks;
	size_t nr_blks, cap_blks;
	uint64_t items;
};

struct pgap { uint64_t start, end; uint32_t frame; };

enum { TR_THREAD = 1, TR_SAMPLES, TR_CPU };

struct track {
	int kind;
	const struct rb_thread *thread;  /* TR_THREAD, TR_SAMPLES */
	const struct rb_comm *comm;      /* the newest seen */
	char *event;                     /* TR_SAMPLES: the event's name */
	int32_t cpu;                     /* TR_CPU */
	int clock_ns;                    /* TR_SAMPLES: weights are ns */
	uint64_t total;                  /* TR_SAMPLES: the weights' sum */
	struct stream ev, wt;            /* events, or samples and their weights */
	uint64_t first, last, branches;  /* at of the first and newest event; branches seen (untimed trace) */
	int started;
	uint32_t *stack;                 /* frames open, innermost last */
	size_t depth, cap_stack;
	struct pgap *gaps;               /* losses not yet shown: they start after the newest event */
	size_t nr_gaps, cap_gaps;
};

struct rb_speedscope {
	char *name;
	FILE *spool;
	uint64_t spool_size;
	struct track *tracks;
	size_t nr_tracks, cap_tracks;
	struct rb_idmap track_ids;       /* (kind, key, event) -> track + 1 */
	struct rb_idmap tid_track;       /* (tid) -> the newest thread track of it + 1 */
	struct rb_idmap cpu_track;       /* (cpu) -> the thread track the CPU ran last + 1 */
	struct rb_idmap frame_ids;       /* (1, sym) or (2, reason index) -> frame + 1 */
	char **frames;
	size_t nr_frames, cap_frames;
	char **reasons;
	size_t nr_reasons;
	struct rb_calls *calls;
	struct rb_machine *m;
	struct rb_speedscope_stats st;
	int timed_known, failed;
	char num[96];
};

/* Adds a block of @n bytes at the spool's end to @w's list. */
static int add_blk(struct rb_speedscope *s, struct stream *w, size_t n)
{
	if (w->nr_blks == w->cap_blks) {
		size_t cap = w->cap_blks ? 2 * w->cap_blks : 8;
		struct blk *v = realloc(w->blks, cap * sizeof(*v));
		if (!v)
			return -1;
		w->blks = v;
		w->cap_blks = cap;
	}
	w->blks[w->nr_blks++] = (struct blk){ s->spool_size, n };
	s->spool_size += n;
	return 0;
}

/* Appends @p (@n bytes) to @w, spilling a full buffer to the spool. */
static int put(struct rb_speedscope *s, struct stream *w, const char *p, size_t n)
{
	if (!w->buf && !(w->buf = malloc(BLOCK)))
		return -1;
	if (w->len + n > BLOCK) {
		if (fwrite(w->buf, 1, w->len, s->spool) != w->len || add_blk(s, w, w->len))
			return -1;
		w->len = 0;
		if (n > BLOCK)        /* a long item (a deep call chain): a block of its own */
			return fwrite(p, 1, n, s->spool) != n || add_blk(s, w, n) ? -1 : 0;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

/* Appends an item (a comma before all but the first). */
static int item(struct rb_speedscope *s, struct stream *w, const char *p, size_t n)
{
	return (w->items++ && put(s, w, ",", 1)) || put(s, w, p, n) ? -1 : 0;
}

/* Copies @w's items to @out. */
static int copy_stream(struct rb_speedscope *s, const struct stream *w, FILE *out)
{
	char buf[BLOCK];
	if (w->nr_blks && fflush(s->spool))
		return -1;
	for (size_t i = 0; i < w->nr_blks; i++) {
		if (fseeko(s->spool, (off_t)w->blks[i].off, SEEK_SET))
			return -1;
		for (size_t done = 0; done < w->blks[i].len;) {
			size_t n = w->blks[i].len - done < sizeof(buf) ? w->blks[i].len - done : sizeof(buf);
			if (fread(buf, 1, n, s->spool) != n || fwrite(buf, 1, n, out) != n)
				return -1;
			done += n;
		}
	}
	if (w->nr_blks && fseeko(s->spool, 0, SEEK_END))
		return -1;
	return w->len && fwrite(w->buf, 1, w->len, out) != w->len ? -1 : 0;
}

static void stream_free(struct stream *w)
{
	free(w->buf);
	free(w->blks);
}

static struct track *track_of(struct rb_speedscope *s, int kind, uint64_t key, uint64_t event)
{
	struct rb_idkey *k = rb_idmap_get(&s->track_ids, (uint64_t)kind, key, event);
	if (!k)
		return NULL;
	if (!k->id) {
		if (s->nr_tracks == s->cap_tracks) {
			size_t cap = s->cap_tracks ? 2 * s->cap_tracks : 64;
			struct track *v = realloc(s->tracks, cap * sizeof(*v));
			if (!v)
				return NULL;
			s->tracks = v;
			s->cap_tracks = cap;
		}
		s->tracks[s->nr_tracks++] = (struct track){ .kind = kind };
		k->id = s->nr_tracks;
	}
	return &s->tracks[k->id - 1];
}

/* The frame of symbol key @sym (names as rbdecode folded's), or of loss reason @reason. UINT32_MAX: no memory. */
static uint32_t frame_of(struct rb_speedscope *s, const struct rb_sym *sym, const char *reason)
{
	uint64_t a = 1, b = (uintptr_t)sym;
	if (reason) {
		size_t i = 0;
		while (i < s->nr_reasons && strcmp(s->reasons[i], reason))
			i++;
		if (i == s->nr_reasons) {
			char **v = realloc(s->reasons, (i + 1) * sizeof(*v));
			if (!v)
				return UINT32_MAX;
			s->reasons = v;
			if (!(v[i] = strdup(reason)))
				return UINT32_MAX;
			s->nr_reasons++;
		}
		a = 2, b = i;
	} else if (!strcmp(rb_trace_calls_name(sym), "[unknown]")) {
		b = 0;               /* every symbol-less place is one frame, as in the folded stacks */
	}
	struct rb_idkey *k = rb_idmap_get(&s->frame_ids, a, b, 0);
	if (!k)
		return UINT32_MAX;
	if (!k->id) {
		if (s->nr_frames == s->cap_frames) {
			size_t cap = s->cap_frames ? 2 * s->cap_frames : 256;
			char **v = realloc(s->frames, cap * sizeof(*v));
			if (!v)
				return UINT32_MAX;
			s->frames = v;
			s->cap_frames = cap;
		}
		char *name;
		if (reason) {
			size_t n = strlen(reason) + 16;
			if ((name = malloc(n)))
				snprintf(name, n, "[trace lost: %s]", reason);
		} else {
			name = strdup(rb_trace_calls_name(sym));
		}
		if (!name)
			return UINT32_MAX;
		s->frames[s->nr_frames++] = name;
		k->id = s->nr_frames;
	}
	return (uint32_t)(k->id - 1);
}

/* One O or C event of @t at @at (not before its newest). */
static int frame_event(struct rb_speedscope *s, struct track *t, int open, uint32_t frame, uint64_t at)
{
	if (!t->started) {
		t->first = at;
		t->started = 1;
	} else if (at < t->last) {
		at = t->last;
	}
	t->last = at;
	int n = snprintf(s->num, sizeof(s->num), "{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}",
			 open ? 'O' : 'C', frame, at);
	return item(s, &t->ev, s->num, (size_t)n);
}

/* The losses of @t that start by @at (all of them when @at is UINT64_MAX), each ended by then. */
static int show_gaps(struct rb_speedscope *s, struct track *t, uint64_t at)
{
	size_t i = 0;
	while (i < t->nr_gaps && t->gaps[i].start <= at) {
		struct pgap g = t->gaps[i++];
		uint64_t end = g.end < at ? g.end : at;
		if (frame_event(s, t, 1, g.frame, g.start) || frame_event(s, t, 0, g.frame, end < t->last ? t->last : end))
			return -1;
	}
	if (i) {   /* (memmove of a NULL array: undefined even for 0 bytes, says UBSan) */
		memmove(t->gaps, t->gaps + i, (t->nr_gaps - i) * sizeof(*t->gaps));
		t->nr_gaps -= i;
	}
	return 0;
}

static int on_path(void *ctx, uint64_t id, uint64_t parent, uint64_t sym, uint64_t ip)
{
	(void)ctx, (void)id, (void)parent, (void)sym, (void)ip;
	return 0;
}

static int on_enter(void *ctx, uint64_t id, uint64_t thread, uint64_t comm, uint64_t path, uint64_t sym, uint64_t time)
{
	struct rb_speedscope *s = ctx;
	(void)id, (void)path;
	struct track *t = track_of(s, TR_THREAD, thread, 0);
	uint32_t frame = frame_of(s, (const struct rb_sym *)(uintptr_t)sym, NULL);
	if (!t || frame == UINT32_MAX || show_gaps(s, t, time))
		return -ENOMEM;
	t->comm = (const struct rb_comm *)(uintptr_t)comm;
	if (t->depth == t->cap_stack) {
		size_t cap = t->cap_stack ? 2 * t->cap_stack : 64;
		uint32_t *v = realloc(t->stack, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->stack = v;
		t->cap_stack = cap;
	}
	t->stack[t->depth++] = frame;
	s->st.calls++;
	return frame_event(s, t, 1, frame, time) ? -ENOMEM : 0;
}

static int on_call(void *ctx, const struct rb_call *c)
{
	struct rb_speedscope *s = ctx;
	struct track *t = track_of(s, TR_THREAD, c->thread, 0);
	if (!t || !t->depth || show_gaps(s, t, c->return_time))
		return -ENOMEM;
	return frame_event(s, t, 0, t->stack[--t->depth], c->return_time) ? -ENOMEM : 0;
}

static int ss_trace(void *ctx, const struct rb_trace_ev *ev)
{
	struct rb_speedscope *s = ctx;
	struct rb_calls_branch b;
	if (s->failed || !rb_trace_calls_branch(s->m, ev, &b))
		return s->failed;
	if (!s->timed_known) {
		s->timed_known = 1;
		s->st.timed = ev->time != 0;
	}
	s->st.from_trace = 1;
	struct track *t = track_of(s, TR_THREAD, b.thread, 0);
	if (!t)
		return s->failed = 1;
	if (!t->thread) {
		t->thread = ev->thread;
		struct rb_idkey *k = rb_idmap_get(&s->tid_track, (uint64_t)(uint32_t)ev->thread->tid, 0, 0);
		if (!k)
			return s->failed = 1;
		k->id = (uint64_t)(t - s->tracks) + 1;
	}
	if (!s->st.timed)
		b.time = ++t->branches;     /* no timing: each thread's branches are its clock */
	if (ev->cpu >= 0) {
		struct rb_idkey *k = rb_idmap_get(&s->cpu_track, (uint64_t)(uint32_t)ev->cpu, 0, 0);
		if (!k)
			return s->failed = 1;
		k->id = (uint64_t)(t - s->tracks) + 1;
	}
	return rb_calls_branch(s->calls, &b) ? (s->failed = 1) : 0;
}

/* A loss: a frame in the thread it names, else in the thread its CPU ran last, else in its CPU's profile. */
static int ss_gap(void *ctx, const struct rb_gap_ev *g)
{
	struct rb_speedscope *s = ctx;
	if (s->failed)
		return s->failed;
	if (rb_calls_gap_restarts(g->reason) && rb_calls_restart(s->calls, g->cpu, g->tid))
		return s->failed = 1;
	s->st.gaps++;
	struct rb_idkey *k = NULL;
	struct track *t = NULL;
	if (g->tid >= 0 && !(k = rb_idmap_get(&s->tid_track, (uint64_t)(uint32_t)g->tid, 0, 0)))
		return s->failed = 1;
	if ((!k || !k->id) && g->cpu >= 0 && !(k = rb_idmap_get(&s->cpu_track, (uint64_t)(uint32_t)g->cpu, 0, 0)))
		return s->failed = 1;
	if (k && k->id)
		t = &s->tracks[k->id - 1];
	uint64_t start = g->time_start, end = g->time_end > start ? g->time_end : start;
	if (t && s->timed_known && !s->st.timed)
		start = end = t->branches;   /* an untimed trace: where the thread's branches stand */
	else if (!start) {
		s->st.gaps_unplaced++;
		return 0;
	}
	if (!t) {
		if (!(t = track_of(s, TR_CPU, (uint64_t)(int64_t)g->cpu, 0)))
			return s->failed = 1;
		t->cpu = g->cpu;
	}
	uint32_t frame = frame_of(s, NULL, g->reason);
	if (frame == UINT32_MAX)
		return s->failed = 1;
	if (t->nr_gaps == t->cap_gaps) {
		size_t cap = t->cap_gaps ? 2 * t->cap_gaps : 8;
		struct pgap *v = realloc(t->gaps, cap * sizeof(*v));
		if (!v)
			return s->failed = 1;
		t->gaps = v;
		t->cap_gaps = cap;
	}
	size_t i = t->nr_gaps;       /* in order of start */
	while (i > 0 && t->gaps[i - 1].start > start) {
		t->gaps[i] = t->gaps[i - 1];
		i--;
	}
	t->gaps[i] = (struct pgap){ start, end, frame };
	t->nr_gaps++;
	return 0;
}

static int ss_sample(void *ctx, const struct rb_sample_ev *ev)
{
	struct rb_speedscope *s = ctx;
	if (s->failed)
		return s->failed;
	s->st.samples++;
	if (!ev->nr_nodes)
		return 0;
	s->st.samples_with_chain++;
	struct track *t = track_of(s, TR_SAMPLES, (uintptr_t)ev->thread, (uint64_t)(int64_t)ev->event.index);
	if (!t)
		return s->failed = 1;
	if (!t->thread) {
		char b[64];
		t->thread = ev->thread;
		if (!ev->event.name)
			snprintf(b, sizeof(b), "event %" PRIu32 ":%" PRIu64, ev->event.type, ev->event.config);
		if (!(t->event = strdup(ev->event.name ? ev->event.name : b)))
			return s->failed = 1;
		/* PERF_TYPE_SOFTWARE cpu-clock, task-clock: periods are nanoseconds */
		t->clock_ns = ev->event.type == 1 && ev->event.config <= 1;
	}
	t->comm = rb_thread_shown_comm(ev->thread, ev->comm);
	if (ev->has_time) {
		if (!t->started)
			t->first = ev->time, t->started = 1;
		t->last = ev->time;
	}
	if (t->ev.items++ ? put(s, &t->ev, ",[", 2) : put(s, &t->ev, "[", 1))
		return s->failed = 1;
	for (size_t i = 0; i < ev->nr_nodes; i++) {
		uint32_t f = frame_of(s, ev->nodes[i].al.sym, NULL);
		int n = snprintf(s->num, sizeof(s->num), i ? ",%" PRIu32 : "%" PRIu32, f);
		if (f == UINT32_MAX || put(s, &t->ev, s->num, (size_t)n))
			return s->failed = 1;
	}
	int n = snprintf(s->num, sizeof(s->num), "%" PRIu64, ev->period);
	t->total += ev->period;
	return put(s, &t->ev, "]", 1) || item(s, &t->wt, s->num, (size_t)n) ? (s->failed = 1) : 0;
}

static int ss_begin(void *ctx, struct rb_machine *m)
{
	((struct rb_speedscope *)ctx)->m = m;
	return 0;
}

/* Every call closed and every loss shown; then the profiles' names, while the session's objects live. */
static int ss_end(void *ctx)
{
	struct rb_speedscope *s = ctx;
	if (s->failed || rb_calls_flush(s->calls))
		return s->failed = 1;
	for (size_t i = 0; i < s->nr_tracks; i++) {
		struct track *t = &s->tracks[i];
		if (show_gaps(s, t, UINT64_MAX))
			return s->failed = 1;
		if (t->kind == TR_CPU)
			continue;
		/* the thread's name now: the session's objects die after end() */
		const char *comm = t->comm ? t->comm->name : t->thread && t->thread->comm ? t->thread->comm->name : "[unknown]";
		char b[512];
		if (t->kind == TR_SAMPLES)
			snprintf(b, sizeof(b), "%s %d/%d %s", comm, t->thread->pid, t->thread->tid, t->event);
		else
			snprintf(b, sizeof(b), "%s %d/%d", comm, t->thread ? t->thread->pid : -1,
				 t->thread ? t->thread->tid : -1);
		free(t->event);
		if (!(t->event = strdup(b)))
			return s->failed = 1;
		t->thread = NULL;
		t->comm = NULL;
	}
	return 0;
}

struct rb_speedscope *rb_speedscope_new(const char *name)
{
	struct rb_speedscope *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	struct rb_calls_out o = { .ctx = s, .path = on_path, .call = on_call, .enter = on_enter };
	if (!(s->name = strdup(name)) || !(s->calls = rb_calls_new(&o)) || !(s->spool = tmpfile())) {
		int e = errno;
		rb_speedscope_free(s);
		errno = e;
		return NULL;
	}
	return s;
}

void rb_speedscope_set_timed(struct rb_speedscope *s, int timed)
{
	s->timed_known = 1;
	s->st.timed = timed;
}

void rb_speedscope_sink(struct rb_speedscope *s, struct rb_sink *sink)
{
	*sink = (struct rb_sink){ .ctx = s, .begin = ss_begin, .sample = ss_sample, .trace = ss_trace, .gap = ss_gap,
				  .end = ss_end };
}

static int shown(const struct rb_speedscope *s, const struct track *t)
{
	return s->st.from_trace ? t->kind != TR_SAMPLES && t->ev.items : t->kind == TR_SAMPLES;
}

void rb_speedscope_stats(const struct rb_speedscope *s, struct rb_speedscope_stats *st)
{
	*st = s->st;
	st->profiles = 0;
	for (size_t i = 0; i < s->nr_tracks; i++)
		st->profiles += shown(s, &s->tracks[i]);
	st->frames = s->nr_frames;
}

/* @str as a JSON string. */
static int put_json_str(FILE *out, const char *str)
{
	json_t *j = json_string(str);
	if (!j)                 /* not UTF-8: byte by byte, as Latin-1 */
		j = json_stringn_nocheck(str, strlen(str));
	int rc = j ? json_dumpf(j, out, JSON_ENCODE_ANY) : -1;
	json_decref(j);
	return rc;
}

int rb_speedscope_write(struct rb_speedscope *s, FILE *out)
{
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"rbdecode " PACKAGE_VERSION
	      "\",\"name\":", out);
	if (put_json_str(out, s->name))
		return -1;
	fputs(",\"activeProfileIndex\":0,\"profiles\":[", out);
	int first = 1;
	for (size_t i = 0; i < s->nr_tracks; i++) {
		const struct track *t = &s->tracks[i];
		char b[64];
		if (!shown(s, t))
			continue;
		fputs(first ? "\n{\"type\":" : ",\n{\"type\":", out);
		first = 0;
		fputs(t->kind == TR_SAMPLES ? "\"sampled\"" : "\"evented\"", out);
		fputs(",\"name\":", out);
		if (t->kind == TR_CPU)
			snprintf(b, sizeof(b), "CPU %d: trace lost, no thread known", t->cpu);
		if (put_json_str(out, t->kind == TR_CPU ? b : t->event))
			return -1;
		int ns = t->kind == TR_SAMPLES ? t->clock_ns : s->st.timed;
		fprintf(out, ",\"unit\":\"%s\"", ns ? "nanoseconds" : "none");
		if (t->kind == TR_SAMPLES) {
			fprintf(out, ",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[", t->total);
			if (copy_stream(s, &t->ev, out))
				return -1;
			fputs("],\"weights\":[", out);
			if (copy_stream(s, &t->wt, out))
				return -1;
			fputs("]}", out);
		} else {
			fprintf(out, ",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64 ",\"events\":[", t->first, t->last);
			if (copy_stream(s, &t->ev, out))
				return -1;
			fputs("]}", out);
		}
	}
	fputs("],\n\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < s->nr_frames; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		if (put_json_str(out, s->frames[i]))
			return -1;
		fputc('}', out);
	}
	fputs("]}}\n", out);
	return ferror(out) ? -1 : 0;
}

void rb_speedscope_free(struct rb_speedscope *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_tracks; i++) {
		struct track *t = &s->tracks[i];
		stream_free(&t->ev);
		stream_free(&t->wt);
		free(t->event);
		free(t->stack);
		free(t->gaps);
	}
	free(s->tracks);
	for (size_t i = 0; i < s->nr_frames; i++)
		free(s->frames[i]);
	free(s->frames);
	for (size_t i = 0; i < s->nr_reasons; i++)
		free(s->reasons[i]);
	free(s->reasons);
	rb_idmap_free(&s->track_ids);
	rb_idmap_free(&s->tid_track);
	rb_idmap_free(&s->cpu_track);
	rb_idmap_free(&s->frame_ids);
	rb_calls_free(s->calls);
	if (s->spool)
		fclose(s->spool);
	free(s->name);
	free(s);
}
