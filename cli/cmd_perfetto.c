/*
 * cmd_perfetto.c - `rbdecode perfetto FILE -o OUT.json`: Chrome's Trace
 * Event Format for ui.perfetto.dev and chrome://tracing (store/perfetto):
 * per thread the calls of hardware trace, per CPU what ran and the ftrace
 * events, losses, IMC counters. Option parsing and wiring (command line
 * stage). Events are written as the session delivers them, into a
 * temporary file renamed into place once complete.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "store/perfetto/perfetto.h"

struct run {
	struct rb_session_opts so;
	int timed, timed_known;
	struct rb_session_stats stats;
};

/* The whole run, into @f: 0, -1 when writing failed, or an exit status said already. */
static int run_perfetto(void *ctx, FILE *f)
{
	struct run *r = ctx;
	struct rb_perfetto *p = rb_perfetto_new(f);
	if (!p) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	if (r->timed_known)
		rb_perfetto_set_timed(p, r->timed);
	struct rb_sink sink;
	rb_perfetto_sink(p, &sink);
	int st = ferror(f) ? -1 : 0;
	if (!st)
		st = cli_view_run(&r->so, &sink, &r->stats, "writing the timeline");
	if (ferror(f)) {              /* the writing failed, not the memory: cli_write_output says why */
		rb_perfetto_free(p);
		return -1;
	}
	struct rb_perfetto_stats ps;
	rb_perfetto_stats(p, &ps);
	if (st < 0 && !ps.calls && !ps.samples_with_chain && !ps.cpu_slices && !ps.counters && !ps.ftrace) {
		if (r->stats.samples)
			cli_error("%s: %" PRIu64 " samples but none has a call chain (record with perf record -g), and "
				  "no hardware trace, context switches, IMC counters or ftrace events: nothing to show",
				  r->so.path, r->stats.samples);
		else
			cli_error("%s: no call chains, no hardware trace, context switches, IMC counters or ftrace "
				  "events: nothing to show", r->so.path);
		st = cli_nothing_to_show(&r->stats);
	}
	if (st < 0 && ps.from_trace && !ps.timed)
		cli_error("%s: the trace has no timing: each thread's calls are drawn on its branch count "
			  "(a branch a microsecond)", r->so.path);
	if (st < 0 && ps.gaps_unplaced)
		cli_error("%s: %" PRIu64 " of %" PRIu64 " losses have no time and are not shown (rbdecode gaps lists them)",
			  r->so.path, ps.gaps_unplaced, ps.gaps);
	if (st < 0 && rb_perfetto_finish(p))
		st = -1;
	rb_perfetto_free(p);
	return st < 0 ? (ferror(f) ? -1 : 0) : st;
}

int cmd_perfetto(int argc, char **argv)
{
	struct run r = { 0 };
	const char *out;
	unsigned warnings = 0;
	int st = cli_view_args(argc, argv, "perfetto", &r.so, &out, &warnings);
	if (st >= 0)
		return st;
	r.timed_known = cli_view_timed(&r.so, &r.timed);
	if ((st = cli_write_output(out, run_perfetto, &r)))
		return st;
	return rb_session_partial(&r.stats) ? EXIT_PARTIAL : EXIT_OK;
}
