/*
 * report.h - one self-contained HTML page about a recording (store stage):
 * the `info` text given by the caller, a per-CPU coverage timeline (decoded
 * events per time bin, every loss marked with its reason and size), an SVG
 * flame graph the page draws from the folded stacks (store/folded: click to
 * zoom, search), the top functions and the slowest calls of hardware trace.
 * No network, no external script: the page (report_page.html, built in)
 * carries its data as JSON.
 *
 * What is kept is aggregated as it comes: the folded stacks (one per
 * distinct stack), 512 time bins per CPU (their width doubles as the
 * recording goes on), the losses (up to RB_REPORT_MAX_GAPS), the slowest
 * RB_REPORT_SLOWEST calls. The page draws at most RB_REPORT_MAX_STACKS
 * stacks (the heaviest; the rest as one "[other stacks]") and no frame
 * narrower than a third of a pixel, and says so.
 *
 * Use: rb_report_new, rb_report_sink, the session run, rb_report_write,
 * rb_report_free. All calls from one thread.
 */
#ifndef RB_STORE_REPORT_H
#define RB_STORE_REPORT_H

#include <stdio.h>
#include "decoder/session/session.h"

enum { RB_REPORT_BINS = 512, RB_REPORT_MAX_GAPS = 20000, RB_REPORT_SLOWEST = 30, RB_REPORT_MAX_STACKS = 50000 };

struct rb_report;

struct rb_report *rb_report_new(void);
/* Fills @sink (ctx = @r). A callback returns 1 (a positive stop code) when memory ran out. */
void rb_report_sink(struct rb_report *r, struct rb_sink *sink);

struct rb_report_stats {
	int from_trace, timed;
	uint64_t samples, samples_with_chain, calls, gaps;
	size_t stacks;
};
void rb_report_stats(const struct rb_report *r, struct rb_report_stats *st);

/* The page to @out; @name titles it, @info is `rbdecode info`'s text. 0, or -1 if memory or writing failed. */
int rb_report_write(struct rb_report *r, FILE *out, const char *name, const char *info);

/* NULL is allowed. */
void rb_report_free(struct rb_report *r);

#endif
