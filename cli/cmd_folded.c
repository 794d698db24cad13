/*
 * cmd_folded.c - `rbdecode folded FILE`: folded stacks for flame graphs
 * (store/folded: from call chains, or from the calls of hardware trace
 * weighed in nanoseconds). Option parsing and wiring (command line stage).
 * With -o the lines go to a temporary file renamed into place once
 * complete: a failed run leaves nothing under the name asked for.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "store/folded/folded.h"

static int write_folded(void *ctx, FILE *f) { return rb_folded_write(ctx, f); }

int cmd_folded(int argc, char **argv)
{
	struct rb_session_opts so;
	const char *out;
	unsigned warnings = 0;
	int st = cli_view_args(argc, argv, "folded", &so, &out, &warnings);
	if (st >= 0)
		return st;
	struct rb_folded *f = rb_folded_new();
	if (!f) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	struct rb_sink sink;
	rb_folded_sink(f, &sink);
	struct rb_session_stats stats;
	if ((st = cli_view_run(&so, &sink, &stats, "folding the stacks")) >= 0) {
		rb_folded_free(f);
		return st;
	}
	if (rb_folded_from_trace(f) && !rb_folded_weighs_time(f))
		cli_error("%s: the trace has no timing: stacks weigh the branches executed, not time", so.path);
	if (!rb_folded_lines(f))
		cli_error("%s: no samples and no calls from hardware trace: nothing to fold", so.path);
	st = cli_write_output(out, write_folded, f);
	rb_folded_free(f);
	if (st)
		return st;
	return rb_session_partial(&stats) ? EXIT_PARTIAL : EXIT_OK;
}
