/*
 * text.h - the text outputs as a sink (store stage): perf script's text of
 * samples, branches and switches (rbdecode script), or the gaps table
 * (rbdecode gaps). The caller runs the session with the sink this module
 * fills in and then asks whether writing failed.
 *
 * Use: rb_text_new, rb_text_begin, rb_text_sink (and rb_text_ftrace_sink
 * for a trace.dat's gaps), the session run, rb_text_failed / rb_text_finish,
 * rb_text_free. All calls from one thread.
 */
#ifndef RB_STORE_TEXT_H
#define RB_STORE_TEXT_H

#include <stdio.h>
#include "decoder/session/session.h"
#include "decoder/ftrace/tracedat.h"

struct rb_text_opts {
	int gaps;               /* the gaps table instead of perf script's text */
	int disasm;             /* script: the instruction at each sample ip (x86-64, capstone) */
	int switches;           /* script: context switches as perf script --show-switch-events */
	const char *symfs;      /* script --disasm: object files are read below this folder (NULL: /) */
	int ns;                 /* script: times in nanoseconds (perf script --ns) */
	int hide_callchain;     /* script: no call chains (perf script -G) */
};

/* What a callback stops the session with (rb_session_run returns it): out of memory, or fields refused. */
enum { RB_TEXT_STOP_NOMEM = 0x7e01, RB_TEXT_STOP_FIELDS = 0x7e02 };

struct rb_text;

/*
 * A text output writing to @out (not closed by this module; the caller sets
 * its buffering). Returns NULL when out of memory.
 */
struct rb_text *rb_text_new(FILE *out, const struct rb_text_opts *opts);

/*
 * A -F argument, as perf script takes it (fields.h): 0, or -1 with perf's
 * message written to @err. Warnings perf gives go to @err too.
 */
int rb_text_fields(struct rb_text *t, const char *arg, FILE *err);

/*
 * What the check of the fields against the recording's events said, NULL
 * if nothing: with *@refused set, why the session was stopped
 * (RB_TEXT_STOP_FIELDS); else which field perf shows is left out.
 */
const char *rb_text_message(const struct rb_text *t, int *refused);

/* 0 if --disasm was asked for and capstone could not be opened (text goes on without instructions). */
int rb_text_disasm_ok(const struct rb_text *t);

/* Writes what comes before the first event (the gaps table's heading). Returns 0, or -1 on a write error. */
int rb_text_begin(struct rb_text *t);

/*
 * Fills @sink with this output's callbacks (ctx = @t). A callback returns -1,
 * which stops the session, when @out has its error flag set.
 */
void rb_text_sink(struct rb_text *t, struct rb_sink *sink);

/* The same for a trace.dat run: its gaps (nothing for script text). */
void rb_text_ftrace_sink(struct rb_text *t, struct rb_ftrace_sink *sink);

/* Non-zero when a write to @out failed (the reason a callback stopped the session). */
int rb_text_failed(const struct rb_text *t);

/* Flushes @out. Returns 0, or -1 when writing failed. */
int rb_text_finish(struct rb_text *t);

/* Why writing failed: the errno of the first write that did (EIO when none was known). */
int rb_text_write_errno(const struct rb_text *t);

/* Frees @t (NULL is allowed); @out stays open. */
void rb_text_free(struct rb_text *t);

#endif
