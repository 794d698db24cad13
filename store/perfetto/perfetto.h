/*
 * perfetto.h - Chrome's Trace Event Format JSON, which ui.perfetto.dev,
 * Perfetto's trace_processor and chrome://tracing open, as a sink (store
 * stage), written to its file as events come (nothing kept per event):
 *  - per thread, the calls of hardware trace (decoder/calls, the database's
 *    calls) as "B"/"E" slices at perf-clock times, properly nested, named by
 *    function as rbdecode folded names them (cat "call");
 *  - per CPU ("CPUs" process, a thread "CPU n" each), what ran between
 *    context switches as "X" slices named "comm pid/tid" (cat "sched"),
 *    and the ftrace events of a trace.dat as instants "i" (cat "ftrace",
 *    args: pid, comm and the event's fields);
 *  - every loss as an "X" slice "[trace lost: REASON]" on its CPU's track
 *    of the "trace losses" process (cat "gap", args: source, bytes and
 *    records lost, detail; cname "terrible", Chrome's red); a loss without
 *    a time is left out and counted;
 *  - IMC counters as "C" counter events, one counter per event and CPU, in
 *    the "IMC counters" process;
 *  - samples with call chains as thread instants named by their leaf
 *    function (args: the stack, root first);
 *  - process and thread names as "M" metadata (the names at the end).
 * Times: "ts" in microseconds with nanosecond decimals ("displayTimeUnit"
 * "ns"). A trace without timing (rb_perfetto_set_timed 0) is drawn on each
 * thread's branch count, one branch a microsecond. The synthetic processes
 * have pids above any kernel's pid_max (PERFETTO_PID_*).
 *
 * Use: rb_perfetto_new(out), rb_perfetto_sink, the session run (every
 * event written to @out as it comes), rb_perfetto_finish, rb_perfetto_free.
 */
#ifndef RB_STORE_PERFETTO_H
#define RB_STORE_PERFETTO_H

#include <stdio.h>
#include "decoder/session/session.h"

enum { PERFETTO_PID_CPUS = 1000000000, PERFETTO_PID_LOSSES = 1100000000, PERFETTO_PID_COUNTERS = 1200000000 };

struct rb_perfetto;

/* NULL when out of memory. Writes the file's opening to @out. */
struct rb_perfetto *rb_perfetto_new(FILE *out);
void rb_perfetto_set_timed(struct rb_perfetto *p, int timed);
/* Fills @sink (ctx = @p). A callback returns 1 (a positive stop code) when memory ran out or writing failed. */
void rb_perfetto_sink(struct rb_perfetto *p, struct rb_sink *sink);

struct rb_perfetto_stats {
	int from_trace, timed;
	uint64_t calls, switches, cpu_slices, gaps, gaps_unplaced, counters, ftrace, samples, samples_with_chain;
};
void rb_perfetto_stats(const struct rb_perfetto *p, struct rb_perfetto_stats *st);
/* Writes the file's end (after the session). 0, or -1 if writing failed. */
int rb_perfetto_finish(struct rb_perfetto *p);
/* NULL is allowed. */
void rb_perfetto_free(struct rb_perfetto *p);

#endif
