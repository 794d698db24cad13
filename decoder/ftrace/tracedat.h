/*
 * tracedat.h - trace-cmd's trace.dat files (versions 6 and 7, the latter
 * with zstd-compressed sections as Debian's trace-cmd 3.1 writes by
 * default), as rbrecord --ftrace or trace-cmd record make them. The pages
 * are walked by ftpage.h; the event formats are read with libtraceevent.
 * Events come out merged across CPUs in time order (as trace-cmd report
 * prints them), with their fields as a JSON object; pages that report
 * missed events, and damaged pages, come out as gaps. One instance is read:
 * the top one, or the first other one when the file has no top buffer.
 */
#ifndef RB_TRACEDAT_H
#define RB_TRACEDAT_H

#include <stddef.h>
#include <stdint.h>
#include "decoder/session/session.h"

struct rb_ftrace_ev {
	uint64_t time;                /* trace clock ns (perf clock when recorded with trace_clock perf) */
	int32_t cpu, pid;
	const char *comm;             /* from the saved cmdlines, "<...>" if unknown (as trace-cmd) */
	const char *system, *name;    /* "sched", "sched_switch"; "unknown" for an id without a format */
	int flags, preempt_count;     /* common_flags, common_preempt_count */
	const char *fields;           /* JSON object of the event's own fields */
	const char *info;             /* the event printed by its format (trace-cmd report's text) */
	uint64_t file_offset;         /* of the event's payload, in the (uncompressed) CPU data */
};

struct rb_ftrace_sink {
	void *ctx;
	int (*event)(void *ctx, const struct rb_ftrace_ev *ev);
	int (*gap)(void *ctx, const struct rb_gap_ev *g);
};

struct rb_tracedat_stats {
	int version, nr_cpus;
	char clock[32];               /* the trace clock in use ("perf", "local", ...), "" if not recorded */
	char instance[64];            /* the tracefs instance read: "" for the top one */
	uint64_t events, pages, unknown_events;
	uint64_t missed_pages, missed_events;   /* pages flagged, events they count (when stored) */
	uint64_t damaged_pages;
	int partial;                  /* some data could not be read: see msg */
};

/* 1 if @path starts with the trace.dat magic, 0 if not (or unreadable). */
int rb_tracedat_is(const char *path);

/*
 * The same in steps, for a session that merges the trace with its own
 * records: open reads the headers (returns 0, -1 with @msg when the file
 * cannot be read, or -ENOMEM); run_until hands @sink the events (and the
 * gaps met on the way) up to @time, with the return values of
 * rb_tracedat_run; close frees. @st and @msg are written until the close.
 */
struct rb_tracedat;
int rb_tracedat_open(struct rb_tracedat **out, const char *path, const struct rb_ftrace_sink *sink,
		     struct rb_tracedat_stats *st, char *msg, size_t msglen);
int rb_tracedat_run_until(struct rb_tracedat *t, uint64_t time);
void rb_tracedat_close(struct rb_tracedat *t);

/*
 * perf.data's tracing data (the TRACING_DATA feature, or a pipe-mode
 * TRACING_DATA record's payload: a trace.dat's metadata after perf's magic
 * and version) read as perf reads it, to print tracepoint samples' fields
 * as perf script does: by each event's print fmt (TEP_PRINT_INFO, no
 * plugins). open: 0, -1 with @msg saying why, or -ENOMEM. text: the fields
 * of a sample of tracepoint @id (its attr.config) with raw data @raw,
 * valid until the next call; NULL for an event the data has no format
 * for. The resolver names kernel addresses (%pS) as perf's machine does.
 */
struct rb_tracepoints;
int rb_tracepoints_open(struct rb_tracepoints **out, const uint8_t *data, size_t size, char *msg, size_t msglen);
void rb_tracepoints_resolver(struct rb_tracepoints *tp, char *(*fn)(void *priv, unsigned long long *addr, char **mod),
			     void *priv);
const char *rb_tracepoints_text(struct rb_tracepoints *tp, uint64_t id, int cpu, const void *raw, uint32_t size);
void rb_tracepoints_free(struct rb_tracepoints *tp);

/*
 * Read @path and hand every event and gap to @sink in time order.
 * Returns 0 (st->partial says whether everything was read, @msg why not);
 * -1 if the file cannot be read at all (@msg names the file and offset);
 * or the first non-zero value a sink callback returned.
 */
int rb_tracedat_run(const char *path, const struct rb_ftrace_sink *sink, struct rb_tracedat_stats *st,
		    char *msg, size_t msglen);

#endif
