/*
 * cmd_report.c - `rbdecode report FILE -o report.html`: one self-contained
 * HTML page (store/report): the info summary, per-CPU coverage with every
 * loss, a flame graph, the top functions and the slowest calls. Option
 * parsing and wiring (command line stage). The page is written whole or
 * not at all.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "store/report/report.h"

struct page { struct rb_report *r; const char *name; char *info; };

static int write_page(void *ctx, FILE *f)
{
	struct page *p = ctx;
	return rb_report_write(p->r, f, p->name, p->info);
}

int cmd_report(int argc, char **argv)
{
	struct rb_session_opts so;
	const char *out;
	unsigned warnings = 0;
	int st = cli_view_args(argc, argv, "report", &so, &out, &warnings);
	if (st >= 0)
		return st;
	/* the summary: info's text, kept for the page */
	struct page pg = { 0 };
	size_t len = 0;
	FILE *m = open_memstream(&pg.info, &len);
	if (!m) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	st = cli_info_text(so.path, m);
	int lost = ferror(m) != 0;   /* a write into the memory stream that found no memory */
	lost |= fclose(m) != 0;
	if (lost || st == EXIT_INTERNAL || st == EXIT_BADINPUT || st == EXIT_USAGE) {
		free(pg.info);
		if (lost && st != EXIT_BADINPUT && st != EXIT_USAGE)
			cli_error("%s: out of memory writing the summary", so.path);
		return lost ? EXIT_INTERNAL : st;
	}
	const char *slash = strrchr(so.path, '/');
	pg.name = slash ? slash + 1 : so.path;
	if (!(pg.r = rb_report_new())) {
		free(pg.info);
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	struct rb_sink sink;
	rb_report_sink(pg.r, &sink);
	struct rb_session_stats stats;
	st = cli_view_run(&so, &sink, &stats, "making the report");
	struct rb_report_stats rs;
	rb_report_stats(pg.r, &rs);
	if (st < 0 && !rs.from_trace && !rs.samples_with_chain) {
		if (rs.samples)
			cli_error("%s: %" PRIu64 " samples but none has a call chain (record with perf record -g) and "
				  "there is no hardware trace: no flame graph to draw", so.path, rs.samples);
		else
			cli_error("%s: no samples with call chains and no hardware trace: nothing to report", so.path);
		st = cli_nothing_to_show(&stats);
	}
	if (st < 0)
		st = cli_write_output(out, write_page, &pg);
	rb_report_free(pg.r);
	free(pg.info);
	if (st)
		return st;
	return rb_session_partial(&stats) ? EXIT_PARTIAL : EXIT_OK;
}
