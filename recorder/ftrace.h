/*
 * ftrace.h - the kernel's other ring buffer: tracepoints and the function
 * tracers recorded through a tracefs instance of rbrecord's own
 * (instances/rbrecord-<pid>), never the global buffer a user may be using.
 * The instance's clock is set to "perf", so its times are those of the perf
 * samples; each CPU's trace_pipe_raw is moved page by page with splice into
 * a per-CPU file, and at the end the pages, the events' formats and the
 * saved cmdlines become a trace-cmd trace.dat (version 6, tdat_write.h).
 *
 * Usage:
 *   ftrace__add_events(&o, "sched:sched_switch,irq:*", &err)   (repeatable)
 *   ftrace__open(&f, &o, &err)     instance, clock, buffer size, events, tracer (tracing still off)
 *   ftrace__start(f, &err)         tracing on, a thread drains every CPU
 *   ftrace__stop(f, &st, &err)     tracing off, last pages read, trace.dat written, instance removed
 *   ftrace__free(f)                removes the instance and the per-CPU files if still there
 * The instance is also removed at exit (atexit) when a caller exits early;
 * instances of rbrecords that were killed (their pid is gone) are removed
 * when the next one starts. After a failed ftrace__open, call ftrace__free.
 */
#ifndef REC_FTRACE_H
#define REC_FTRACE_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct ftrace_opts {
	char **events;              /* "sys:name", "sys:*", "sys", "function", "function_graph" */
	size_t nr_events;
	const char *func_filter;    /* set_ftrace_filter for the function tracers (may be NULL) */
	const char *func_notrace;   /* set_ftrace_notrace (may be NULL) */
	unsigned buffer_kb;         /* per-CPU buffer size; 0 keeps the kernel's default */
	const char *output;         /* the trace.dat to write */
};

struct ftrace_stats {
	uint64_t pages, bytes;      /* pages moved into the recording */
	uint64_t overrun, dropped;  /* events lost per the CPUs' stats files */
	int nr_cpus;
};

struct ftrace_rec;

/* Add a comma-separated list of events. 0, or -1 with @e saying which is malformed. */
int ftrace__add_events(struct ftrace_opts *o, const char *list, struct rec_err *e);
/* The trace.dat name beside the perf.data @output: "@output.trace.dat" (malloc'ed). */
char *ftrace__output_name(const char *perf_output);
void ftrace__opts_free(struct ftrace_opts *o);

int ftrace__open(struct ftrace_rec **out, const struct ftrace_opts *o, struct rec_err *e);
int ftrace__start(struct ftrace_rec *f, struct rec_err *e);
int ftrace__stop(struct ftrace_rec *f, struct ftrace_stats *st, struct rec_err *e);
void ftrace__free(struct ftrace_rec *f);

#endif
