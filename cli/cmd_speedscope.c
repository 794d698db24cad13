/*
 * cmd_speedscope.c - `rbdecode speedscope FILE -o OUT`: speedscope's file
 * format (store/speedscope): per thread, the calls of hardware trace as
 * frame events in time, losses as frames; or the call chains of samples.
 * Option parsing and wiring (command line stage). The file is written
 * whole or not at all.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "store/speedscope/speedscope.h"

static int write_speedscope(void *ctx, FILE *f) { return rb_speedscope_write(ctx, f); }

int cmd_speedscope(int argc, char **argv)
{
	struct rb_session_opts so;
	const char *out;
	unsigned warnings = 0;
	int st = cli_view_args(argc, argv, "speedscope", &so, &out, &warnings);
	if (st >= 0)
		return st;
	const char *slash = strrchr(so.path, '/');
	struct rb_speedscope *s = rb_speedscope_new(slash ? slash + 1 : so.path);
	if (!s) {
		cli_error("cannot start: %s (a spool file in $TMPDIR is needed)", strerror(errno));
		return EXIT_INTERNAL;
	}
	struct rb_sink sink;
	struct rb_session_stats stats;
	int timed;
	if (cli_view_timed(&so, &timed))
		rb_speedscope_set_timed(s, timed);
	rb_speedscope_sink(s, &sink);
	if ((st = cli_view_run(&so, &sink, &stats, "writing the profiles")) >= 0) {
		rb_speedscope_free(s);
		return st;
	}
	struct rb_speedscope_stats ss;
	rb_speedscope_stats(s, &ss);
	if (!ss.profiles) {
		if (ss.from_trace)
			cli_error("%s: the hardware trace gave no calls: nothing to show", so.path);
		else if (ss.samples)
			cli_error("%s: %" PRIu64 " samples but none has a call chain (record with perf record -g) and "
				  "there is no hardware trace: nothing to show", so.path, ss.samples);
		else
			cli_error("%s: no samples with call chains and no hardware trace: nothing to show", so.path);
		rb_speedscope_free(s);
		return cli_nothing_to_show(&stats);
	}
	if (ss.from_trace && !ss.timed)
		cli_error("%s: the trace has no timing: each thread's clock counts its branches", so.path);
	if (ss.gaps_unplaced)
		cli_error("%s: %" PRIu64 " of %" PRIu64 " losses have no time and are not shown (rbdecode gaps lists them)",
			  so.path, ss.gaps_unplaced, ss.gaps);
	st = cli_write_output(out, write_speedscope, s);
	rb_speedscope_free(s);
	if (st)
		return st;
	return rb_session_partial(&stats) ? EXIT_PARTIAL : EXIT_OK;
}
