/*
 * intel_pt.c - see intel_pt.h. Three parts, in files of their own:
 *
 *  1. Gathering (pt_gather.c, from rb_pt_open): a pass over the recording
 *     collects AUXTRACE_INFO, TIME_CONV, the CPUID feature and every
 *     queue's AUX data, cut into runs (each decoded as one stream), and
 *     the sideband decoding depends on: each CPU's thread timeline and the
 *     times of records that change memory maps.
 *
 *  2. Decoding (pt_decode.c, from rb_pt_run_until): per queue, a libipt
 *     decoder over the current run; its events go out through pt_events.c.
 *     Decoding goes in time windows that never cross a map-changing record:
 *     within a window the queues are independent (each follows its CPU's
 *     thread timeline itself), so -j N decodes them on N threads. Each
 *     queue's events go to its own list; the session takes them merged in
 *     time order (queue index breaks ties). Nothing depends on which thread
 *     decoded what or when, so the output is the same for every N. A long
 *     run is split in segments too, decoded by lanes its queue takes over
 *     (pt_segment.c, which also runs a window's work on the thread pool).
 *     The pool decodes the next window while the session takes the last
 *     one and applies the records between (launch_bg, join_bg), so that
 *     decoding and the session overlap however often it is called.
 *     What is held is bounded by the window, not the trace: a window makes
 *     about WINDOW_EVENTS events, and the AUX data is read from spool
 *     files whose pages go back to the kernel behind the decoders.
 *
 *  3. Memory (pt_image.c): one libipt image per process and queue, its
 *     sections added on first miss from the session's machine.
 *
 * pt_dump.c shows the packets (rbdecode dump --packets) and has no part in
 * decoding. Beside them: pt_clock.c dates packets as perf does, pt_filter.c
 * places the address filters, pt_resync.c resumes decoding after missing
 * code at the next address the trace gives (as perf does, where libipt
 * would wait for the next PSB), pt_source.c makes this a trace source; what
 * the files share is in pt_internal.h.
 *
 * This file ties the parts together: rb_pt_open (gathering, then the
 * decoder's settings: libipt's decoder, times, section caches, threads,
 * segment and window sizes), rb_pt_run_until (windows one after another,
 * and their events taken), rb_pt_free, and the session's questions.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pt_internal.h"

static int all_done(const struct rb_pt *pt)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].state != Q_DONE && !pt->q[i].err)
			return 0;
	return 1;
}

/*
 * Where the next window ends: about @delta after the last one (or where the
 * queues are, when all are further on), never beyond the next record that
 * changes memory maps, since the images are read from the session's machine
 * as it is now. Everything it depends on follows from the recording, so the
 * windows are the same however many threads decode.
 */
static uint64_t next_window_end(const struct rb_pt *pt, uint64_t time, int *jumped)
{
	uint64_t w = pt->win_end > UINT64_MAX - pt->delta ? UINT64_MAX : pt->win_end + pt->delta;
	uint64_t lo = UINT64_MAX;
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].state != Q_DONE && pt->q[i].time < lo)
			lo = pt->q[i].time;
	*jumped = lo != UINT64_MAX && lo > w;
	if (*jumped)
		w = lo;
	uint64_t b = next_bound(pt, time);
	return w < b ? w : b;
}

#define WINDOW_EVENTS 16384     /* events a window should produce: what is held in memory */

/* The next window as long as makes about WINDOW_EVENTS events at the rate of the one that made @made. */
static void next_delta(struct rb_pt *pt, uint64_t made, int jumped)
{
	uint64_t d = pt->delta;
	if (made)
		d = (uint64_t)((double)d * (double)pt->win_events / (double)made);
	else if (!jumped)
		d *= 2;
	if (d < pt->delta / 8)
		d = pt->delta / 8;
	if (d > pt->delta * 2)
		d = pt->delta * 2;
	pt->delta = d < 1000 ? 1000 : d > (UINT64_C(1) << 50) ? UINT64_C(1) << 50 : d;
}

/* The window ending at @w is decoded: its events join those waiting in tk (in front of them with @front). */
static int window_done(struct rb_pt *pt, uint64_t w, int jumped, int front)
{
	uint64_t made = 0;      /* events decoded (delivered or not): the window's work */
	if (finish_window(pt, &made))
		return pt->failed;
	for (size_t i = 0; i < pt->nr_q; i++)
		if (front ? move_out_front(&pt->q[i]) : move_out(&pt->q[i]))
			return pt->failed = -ENOMEM;
	pt->win_end = w;
	next_delta(pt, made, jumped);
	return 0;
}

/* The window decoding in the background is done (this thread holds no lock). */
static int join_bg(struct rb_pt *pt)
{
	join_tasks(pt);
	pt->bg = 0;
	pt->overlap = 0;
	return window_done(pt, pt->bg_w, pt->bg_jumped, 1);
}

/*
 * The pool starts on the next window, to decode it while the session takes
 * what waits and applies the records up to @time and beyond, call after
 * call, until one asks for what is past the windows decoded (join_bg). The
 * window is the one the next call would make, cut at the first bound from
 * @time on: if that bound is at or before the windows' end, the session
 * must apply it first and nothing starts. So no map the window's code is
 * read from changes while it decodes, as with windows decoded in a call;
 * the sideband the session applies meanwhile (threads, comms, switches)
 * is what a window decoded in a call sees change as take() goes on
 * (rb_pt_run_until says why the images chosen are the same), and the
 * session changes the machine under mlock (held) while the pool may read
 * it. An exec, a reused pid or a map over code an image read drops images
 * the window may be using: rb_pt_sideband waits for the window first.
 * Windows do not change the output (pt_parallel).
 * A map-changing record that comes out of time order, or without a time,
 * would be applied while a window decodes, before or after its reads as
 * the threads run: recordings that have one (the gathering pass looks,
 * bg_off) decode every window within a call.
 */
static void launch_bg(struct rb_pt *pt, uint64_t time)
{
	if (!pt->pool.n || pt->bg_off || pt->failed || time == UINT64_MAX || all_done(pt))
		return;
	int jumped;
	uint64_t w = next_window_end(pt, time, &jumped);
	if (w <= pt->win_end)
		return;
	for (size_t i = 0; i < pt->nr_q; i++)
		if (front_room(&pt->q[i])) {
			pt->failed = -ENOMEM;
			return;
		}
	uint64_t limit = perf_to_tsc(pt, w);
	if (prepare_window(pt, limit))
		return;
	launch_tasks(pt, limit);
	pt->bg = 1;
	pt->bg_windows++;
	pt->bg_w = w;
	pt->bg_jumped = jumped;
	pt->overlap = 1;
}

static int run_until(struct rb_pt *pt, uint64_t time)
{
	if (pt->failed)
		return pt->failed;
	if (pt->timeless && time != UINT64_MAX)
		return 0;        /* no times: the trace is decoded after the sideband */
	/*
	 * With a pool, the session takes a window's events (symbols, sink) while
	 * the pool decodes the next one: windows never cross a map change and the
	 * sideband is applied between calls, so both see the same machine (under
	 * pt->mlock). The windows, and what is taken up to which key, are the same
	 * as one window after the other, and so is the output. One thing take()
	 * does to the machine comes later than before: rb_machine_thread(create)
	 * for an event's thread now follows the next window's decoding. Decoding
	 * reads threads only to choose a process image (set_thread, read_memory),
	 * and a thread take() would create or give a pid is one whose queue
	 * already decodes as that pid (per CPU: the timeline's pid; per thread:
	 * the queue's tid as its pid until the machine knows better), so the
	 * images chosen are the same. Between calls, the pool goes on with the
	 * next window (launch_bg).
	 */
	int have = 0;            /* a finished window's events wait in tk, to be taken up to @key */
	uint64_t key = 0;
	if (pt->bg) {
		if (time <= pt->win_end)
			return take_until(pt, time);      /* the window in the background goes on */
		if (join_bg(pt))
			return pt->failed;
		have = 1;
		key = pt->win_end < time ? pt->win_end : time;
	}
	while (pt->win_end < time && !all_done(pt)) {
		int jumped;
		uint64_t w = next_window_end(pt, time, &jumped);
		uint64_t limit = perf_to_tsc(pt, w);
		if (!have)
			for (size_t i = 0; i < pt->nr_q; i++)
				move_back(&pt->q[i]);
		if (prepare_window(pt, limit))
			return pt->failed;
		int rc = 0;
		if (have && pt->pool.n) {
			launch_tasks(pt, limit);
			pt->overlap = 1;
			rc = take_until(pt, key);
			pt->overlap = 0;
			join_tasks(pt);
		} else {
			run_tasks(pt, limit);
		}
		if (rc || window_done(pt, w, jumped, 0))
			return pt->failed;
		key = w < time ? w : time;
		have = 1;
		if (!pt->pool.n && take_until(pt, key))
			return pt->failed;
	}
	launch_bg(pt, time);
	return pt->failed ? pt->failed : take_until(pt, time);
}

/* The session lets the pool read the machine (it holds mlock between calls while a window runs). */
static void let_go(struct rb_pt *pt)
{
	if (pt->held)
		pthread_mutex_unlock(&pt->mlock);
	pt->held = 0;
}

int rb_pt_run_until(struct rb_pt *pt, uint64_t time)
{
	let_go(pt);              /* the session is in here: the pool may read the machine while it takes */
	int rc = run_until(pt, time);
	if (pt->bg) {            /* and while the session is elsewhere, it may change it: only between its changes */
		pthread_mutex_lock(&pt->mlock);
		pt->held = 1;
	}
	return rc;
}

int rb_pt_has_queue(const struct rb_pt *pt, uint32_t idx)
{
	return idx < pt->nr_q && pt->q[idx].nr_chunks > 0;
}

int rb_pt_owns_aux(const struct rb_pt *pt, int32_t cpu, int32_t tid)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].nr_chunks && rb_pt_owns(pt, &pt->q[i], cpu, tid))
			return 1;
	return 0;
}

int rb_pt_synth_events(const struct rb_pt *pt, int (*fn)(void *ctx, const struct rb_event_desc *d), void *ctx)
{
	if (!pt->have_config)
		return 0;
	char name[32];
	uint64_t st = rb_synth_sample_type(pt->attr.sample_type, pt->timeless);
	if (pt->nr_priv > P_PER_CPU_MMAPS && !pt->priv[P_PER_CPU_MMAPS])
		st &= ~(uint64_t)PD_SAMPLE_CPU;
	int rc = 0;
	if (!pt->env.no_branches) {
		snprintf(name, sizeof(name), "branches%s", pt->mods);
		rc = fn(ctx, &(struct rb_event_desc){ .name = name, .type = PD_TYPE_HARDWARE, .config = 4,
						       .sample_type = st | PD_SAMPLE_ADDR, .sample_period = 1,
						       .kind = RB_EV_BRANCH });
	}
	if (!rc && pt->insn_period) {
		snprintf(name, sizeof(name), "instructions%s", pt->mods);
		rc = fn(ctx, &(struct rb_event_desc){ .name = name, .type = PD_TYPE_HARDWARE, .config = 1,
						       .sample_type = st, .sample_period = pt->insn_period,
						       .kind = RB_EV_INSTRUCTION });
	}
	/* the rest are perf's own type, sampled one by one, without a period; named without modifiers */
	st = (st & ~(uint64_t)PD_SAMPLE_PERIOD) | PD_SAMPLE_RAW;
	static const struct { const char *name; int power; unsigned config; } pwr[] = {
		{ "cbr", RB_PWR_CBR, 5 }, { "psb", RB_PWR_PSB, 6 }, { "mwait", RB_PWR_MWAIT, 1 },
		{ "pwre", RB_PWR_PWRE, 2 }, { "exstop", RB_PWR_EXSTOP, 3 }, { "pwrx", RB_PWR_PWRX, 4 },
	};
	if (!rc && pt->env.ptwrites)
		rc = fn(ctx, &(struct rb_event_desc){ .name = "ptwrite", .type = RB_TYPE_SYNTH, .config = 0,
						       .sample_type = st, .sample_period = 1, .kind = RB_EV_PTWRITE });
	/* mwait, pwre, exstop and pwrx only when the trace was asked for them (pwr_evt) */
	size_t n = !pt->env.pwr_events ? 0 : (pt->config & (1u << 4)) ? 6 : 2;
	for (size_t i = 0; !rc && i < n; i++)
		rc = fn(ctx, &(struct rb_event_desc){ .name = pwr[i].name, .type = RB_TYPE_SYNTH,
						       .config = pwr[i].config, .sample_type = st, .sample_period = 1,
						       .kind = RB_EV_POWER, .power = pwr[i].power });
	return rc;
}

/*
 * Thread changes come from the timeline the gathering pass built. An exec,
 * a new process with the pid of one whose code was read (pids are reused),
 * or a map over code an image has read, drops the images that hold it.
 */
void rb_pt_sideband(struct rb_pt *pt, const struct pd_event *ev)
{
	int32_t pid;
	uint64_t lo = 0, hi = UINT64_MAX;
	if (ev->type == PD_RECORD_COMM && (ev->misc & PD_MISC_COMM_EXEC)) {  /* a new program: a new memory image */
		pid = (int32_t)ev->u.comm.pid;
	} else if (ev->type == PD_RECORD_FORK && ev->u.fork.pid == ev->u.fork.tid && ev->u.fork.pid != ev->u.fork.ppid) {
		pid = (int32_t)ev->u.fork.pid;      /* a new process: its maps are its parent's, not the old pid's */
	} else if (ev->type == PD_RECORD_MMAP || ev->type == PD_RECORD_MMAP2) {
		/* pid -1: the kernel's maps, in every process's image */
		pid = (int32_t)(ev->type == PD_RECORD_MMAP ? ev->u.mmap.pid : ev->u.mmap2.pid);
		lo = ev->type == PD_RECORD_MMAP ? ev->u.mmap.start : ev->u.mmap2.start;
		uint64_t len = ev->type == PD_RECORD_MMAP ? ev->u.mmap.len : ev->u.mmap2.len;
		hi = len > UINT64_MAX - lo ? UINT64_MAX : lo + len;
	} else {
		return;
	}
	/* no code read there yet (a library loaded, a process that has not run): read on first miss */
	if (!images_hold(pt, pid, lo, hi))
		return;
	if (pt->bg) {    /* the window in the background may be using them (a failure: pt->failed) */
		let_go(pt);
		join_bg(pt);
	}
	drop_images(pt, pid, lo, hi);
}

int rb_pt_open(struct rb_pt **out, const char *path, const struct rb_pt_env *env, struct pd_error *err)
{
	*out = NULL;
	struct rb_pt *pt = calloc(1, sizeof(*pt));
	if (!pt)
		return PD_ERR_NOMEM;
	pt->env = *env;
	pt->insn_period = env->insn_period;
	pt->insn_dec = env->insn_period != 0;
	/* 100 us to begin with; RBDECODE_PT_WINDOW (ns) lets tests show that windows do not change the output */
	const char *w = getenv("RBDECODE_PT_WINDOW");
	pt->delta = w && strtoull(w, NULL, 10) >= 1000 ? strtoull(w, NULL, 10) : 100000;
	pthread_mutex_init(&pt->mlock, NULL);
	int rc = gather(pt, path, err);
	if (rc <= 0) {
		rb_pt_free(pt);
		return rc;
	}
	/*
	 * Erratum SKL014 (a direct jump or call out of a filter region gives
	 * TIP.PGD without IP): libipt 2.0's block decoder, ending blocks at
	 * jumps as ours do, binds such a TIP.PGD to the first direct jump inside
	 * the region on the way; its instruction decoder finds the jump or call
	 * that leaves. Filtered traces of those CPUs take the instruction decoder.
	 */
	struct pt_errata er;
	struct pt_conf_addr_filter af;
	memset(&af, 0, sizeof(af));
	if (pt->have_cpu && pt_cpu_errata(&er, &pt->cpu) >= 0 && er.skl014 && rb_pt_filters_config(&pt->filt, &af))
		pt->insn_dec = 1;
	pt->qry_dec = env->quick;
	/*
	 * The quick pass's lanes hand over at events, where a full decode's do
	 * not start: it reports no seek points, so it needs no segments to make
	 * them on one thread either.
	 */
	if (pt->qry_dec)
		pt->env.seek_point = NULL;
	if (pt->nr_priv > P_TIME_ZERO && pt->priv[P_TIME_MULT] &&
	    (pt->nr_priv <= P_CAP_USER_TIME_ZERO || pt->priv[P_CAP_USER_TIME_ZERO])) {
		pt->time_shift = pt->priv[P_TIME_SHIFT];
		pt->time_mult = pt->priv[P_TIME_MULT];
		pt->time_zero = pt->priv[P_TIME_ZERO];
	}
	if (pt->time_shift > 63)
		pt->time_shift = 63;
	if (pt->time_mult) {
		/* the TSC frequency; the max non-turbo ratio is TSC / 100 MHz when not recorded (as perf) */
		uint64_t ns = 1000000000, quot = ns / pt->time_mult, rem = ns % pt->time_mult;
		uint64_t tsc_hz = (quot << pt->time_shift) + ((rem << pt->time_shift) / pt->time_mult);
		pt->max_nonturbo = pt->nr_priv > P_MAX_NONTURBO_RATIO ? (unsigned)pt->priv[P_MAX_NONTURBO_RATIO] : 0;
		if (!pt->max_nonturbo)
			pt->max_nonturbo = (unsigned)((tsc_hz + 50000000) / 100000000);
		pt->cbr2khz = pt->max_nonturbo ? tsc_hz / pt->max_nonturbo / 1000 : 0;
	}
	if (!pt->time_mult || (pt->have_config && pt->nr_priv > P_TSC_BIT && !(pt->config & pt->priv[P_TSC_BIT])))
		pt->timeless = 1;
	/*
	 * A section cache per queue: libipt shares a cached section's block
	 * cache among the decoders that use it, and with several threads that
	 * made corrupt traces decode differently from run to run.
	 */
	int nomem = 0;
	for (size_t i = 0; i < pt->nr_q; i++)
		if (pt->q[i].nr_runs && !(pt->q[i].iscache = pt_iscache_alloc("rbdecode")))
			nomem = 1;
	if (nomem || start_pool(pt, env->jobs) < 0) {
		rb_pt_free(pt);
		return PD_ERR_NOMEM;
	}
	if (setup_timelines(pt) < 0 || (!env->no_index && pt_index_start(pt) < 0)) {
		rb_pt_free(pt);
		return PD_ERR_NOMEM;
	}
	/*
	 * Segments: RBDECODE_PT_SEGMENT bytes (0: none), by default only with
	 * threads to decode them on: a lane's warm-up is work done twice, and
	 * one thread gives the same output without (what a queue takes over is
	 * what it would have decoded). With threads, windows are made to hold
	 * about a segment's worth of events per thread, so that there is work
	 * for each: half its bytes (ptgen's traces make 0.55 events a byte);
	 * two windows' events are held at once (one decoded while the session
	 * takes the other), so more costs memory and gains no speed.
	 */
	const char *seg = getenv("RBDECODE_PT_SEGMENT");
	pt->seg_size = seg && *seg ? strtoull(seg, NULL, 10)
		     : env->jobs > 1 || pt->env.seek_point || env->nr_seek ? SEGMENT_BYTES : 0;
	if (pt->insn_period || pt->timeless)
		pt->seg_size = 0;
	if (pt->seg_size && pt->seg_size < 256)
		pt->seg_size = 256;
	/*
	 * One thread starting at seek points, asked to report none and given no
	 * RBDECODE_PT_SEGMENT: lanes only for those starts; others would be
	 * warm-ups decoded twice, with nothing to run them beside.
	 */
	pt->seek_lanes_only = env->jobs <= 1 && !pt->env.seek_point && env->nr_seek && !seg;
	/*
	 * With segments, a window begins with its new lanes' seeks, which the
	 * session waits for (prepare_window): a window of as many events as its
	 * threads' segments have bytes gives each thread a segment or more to
	 * seek and decode, and that wait once per N segments. Half that made
	 * the export of scale.sh's 64 MB one-queue trace 10 to 20% slower, for
	 * 30 MB less held (its peak 91 -> 123 MB; flat in the trace's size).
	 */
	pt->win_events = WINDOW_EVENTS;
	if (pt->seg_size && env->jobs > 1 && pt->win_events < (uint64_t)env->jobs * pt->seg_size)
		pt->win_events = (uint64_t)env->jobs * pt->seg_size;
	for (size_t i = 0; i < pt->nr_q; i++)
		pt->q[i].state = pt->q[i].nr_runs ? Q_NEXT_RUN : Q_DONE;
	/* queues that start at a seek point of an earlier decode (one each: the first given) */
	for (size_t k = 0; k < env->nr_seek; k++) {
		const struct rb_seek_ev *s = &env->seek[k];
		struct ptq *q = NULL;
		for (size_t i = 0; i < pt->nr_q && !q; i++)
			if (pt->q[i].idx == s->queue && pt->q[i].nr_runs)
				q = &pt->q[i];
		if (!q || q->seek_at || q->seek_lane)
			continue;
		if (seek_start(pt, q, s)) {     /* not this recording's: decode from the start instead */
			pt->env.st->seek_failed = 1;
			pd_error_clear(err);
			err->code = PD_ERR_INVAL;
			snprintf(err->msg, sizeof(err->msg), "queue %" PRIu32 ": seek point at trace offset %" PRIu64
				 " is not a PSB of this recording", s->queue, s->pos);
			rb_pt_free(pt);
			return err->code;
		}
	}
	*out = pt;
	return 1;
}

void rb_pt_free(struct rb_pt *pt)
{
	if (!pt)
		return;
	struct pool *pl = &pt->pool;
	let_go(pt);              /* a window in the background: its threads finish it first */
	if (pl->n) {
		pthread_mutex_lock(&pl->mu);
		pl->quit = 1;
		pthread_cond_broadcast(&pl->go);
		pthread_mutex_unlock(&pl->mu);
		for (int i = 0; i < pl->n; i++)
			pthread_join(pl->th[i], NULL);
	}
	if (pl->th) {
		pthread_mutex_destroy(&pl->mu);
		pthread_cond_destroy(&pl->go);
		pthread_cond_destroy(&pl->done);
	}
	if (getenv("RBDECODE_PT_DEBUG")) {
		fprintf(stderr, "rbdecode: intel_pt: %" PRIu64 " lanes taken over\n", pt->handoffs);
		if (pt->bg_off)
			fprintf(stderr, "rbdecode: intel_pt: no window decoded in the background: %s at file offset %#" PRIx64 "\n",
				pt->bg_off_why, pt->bg_off_at);
		else
			fprintf(stderr, "rbdecode: intel_pt: %" PRIu64 " windows decoded in the background\n", pt->bg_windows);
	}
	free(pl->th);
	free(pl->tasks);
	for (size_t i = 0; i < pt->nr_q; i++) {
		struct ptq *q = &pt->q[i];
		while (q->lanes) {
			struct ptq *l = q->lanes;
			q->lanes = l->next;
			free_lane(pt, l);
		}
		free_decoding(pt, q);
		if (q->map_len)
			munmap(q->buf, (size_t)q->map_len);
		else
			free(q->buf);
		if (q->spool_fd >= 0)
			close(q->spool_fd);
		free(q->chunks);
		free(q->runs);
		drop_items(q, q->out_head);
		free(q->out);
		free_gaps(q->tk, q->tk_head, q->tk_n);
		free(q->tk);
	}
	free(pt->q);
	while (pt->nr_spare)             /* after the lanes, which give theirs back */
		free(pt->spare[--pt->nr_spare]);
	free(pt->ix);
	free(pt->breaks);
	free(pt->tl);
	free(pt->bounds);
	free(pt->thread_forks);
	free(pt->bounce);

	pthread_mutex_destroy(&pt->mlock);
	free(pt);
}
