/*
 * speedscope.h - speedscope's file format (https://www.speedscope.app/
 * file-format-schema.json) as a sink (store stage):
 *  - hardware trace (Intel PT, CoreSight): per thread an "evented" profile,
 *    the calls decoder/calls builds from the branches as open ("O") and close
 *    ("C") frame events at perf-clock times (nanoseconds), so speedscope's
 *    time-ordered view shows each thread's calls one after the other. Every
 *    loss is a frame of its own, `[trace lost: REASON]`, from its start to
 *    its end, in the thread its CPU ran (or the thread it names), so that a
 *    hole is not mistaken for time spent in the enclosing call; a loss no
 *    thread can be found for goes to a profile of its CPU. A trace without
 *    timing counts each thread's branches instead of time (unit "none");
 *  - recorded samples with call chains: per thread and event a "sampled"
 *    profile, a sample per recorded sample (its call chain, root first),
 *    weighed by the sample's period (nanoseconds for cpu-clock and
 *    task-clock).
 * Frames are function names as rbdecode folded writes them ("[unknown]"
 * where no symbol is known). A recording with trace gives the trace's
 * profiles; one without, its samples'.
 *
 * Memory: events are not kept. Each profile's JSON text is written as it
 * comes, in blocks, to an unlinked spool file in $TMPDIR; the file is
 * assembled from the blocks at the end. What is kept grows with the
 * threads, the call depth and the distinct functions.
 *
 * Use: rb_speedscope_new, rb_speedscope_sink, the session run,
 * rb_speedscope_write, rb_speedscope_free. All calls from one thread.
 */
#ifndef RB_STORE_SPEEDSCOPE_H
#define RB_STORE_SPEEDSCOPE_H

#include <stdio.h>
#include "decoder/session/session.h"

struct rb_speedscope;

/* NULL when out of memory or no spool file can be made (errno says why). @name: the file's "name". */
struct rb_speedscope *rb_speedscope_new(const char *name);

/*
 * Whether the trace is timed: a trace whose branches all carry one time
 * (CoreSight without timestamps has the AUX record's) is drawn on each
 * thread's branch count instead. What is found first when not called: the
 * first branch's time being non-zero. rb_trace_timed_probe (trace_calls.h)
 * finds it out in a pass of its own.
 */
void rb_speedscope_set_timed(struct rb_speedscope *s, int timed);

/* Fills @sink (ctx = @s). A callback returns 1 (a positive stop code) when memory ran out or the spool could not be written. */
void rb_speedscope_sink(struct rb_speedscope *s, struct rb_sink *sink);

struct rb_speedscope_stats {
	int from_trace, timed;        /* profiles of hardware trace; timed: nanoseconds, else branches */
	uint64_t calls, gaps, gaps_unplaced;   /* gaps_unplaced: without a time, left out */
	uint64_t samples, samples_with_chain;
	size_t profiles, frames;
};
void rb_speedscope_stats(const struct rb_speedscope *s, struct rb_speedscope_stats *st);

/* Writes the file to @out. 0, or -1 if writing or reading the spool failed. */
int rb_speedscope_write(struct rb_speedscope *s, FILE *out);

/* NULL is allowed. */
void rb_speedscope_free(struct rb_speedscope *s);

#endif
