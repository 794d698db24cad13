/*
 * cmd_folded.c - `rbdecode folded FILE`: folded stacks for flame graphs
 * (store/folded: from call chains, or from the calls of hardware trace
 * weighed in nanoseconds). Option parsing and wiring (command line stage).
 * With -o the lines go to a temporary file renamed into place once
 * complete: a failed run leaves nothing under the name asked for.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "decoder/session/session.h"
#include "store/folded/folded.h"

/* Writes @f to @out (stdout when NULL) as a whole file. 0, or an exit status after saying why. */
static int write_out(struct rb_folded *f, const char *out)
{
	if (!out) {
		int rc = rb_folded_write(f, stdout);
		if (rc || fflush(stdout) || ferror(stdout)) {
			cli_error("writing the output failed (standard output)");
			return EXIT_INTERNAL;
		}
		return 0;
	}
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", out, (long)getpid());
	FILE *o = fopen(tmp, "w");
	if (!o) {
		cli_error("%s: cannot create: %s", tmp, strerror(errno));
		return EXIT_INTERNAL;
	}
	int rc = rb_folded_write(f, o);
	int e = ferror(o) ? EIO : 0;
	if (fclose(o) && !e)
		e = errno;
	if (rc || e || rename(tmp, out)) {
		cli_error("%s: writing failed: %s", out, strerror(e ? e : errno ? errno : EIO));
		unlink(tmp);
		return EXIT_INTERNAL;
	}
	return 0;
}

int cmd_folded(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "time", required_argument, NULL, 't' }, { "cpu", required_argument, NULL, 'C' },
		{ "symfs", required_argument, NULL, 's' }, { "kallsyms", required_argument, NULL, 'k' },
		{ "vmlinux", required_argument, NULL, 'V' }, { "kcore", required_argument, NULL, 'K' },
		{ "jobs", required_argument, NULL, 'J' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct rb_session_opts so;
	const char *out = NULL;
	unsigned warnings = 0;
	int c;
	memset(&so, 0, sizeof(so));
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': case 'C': case 's': case 'k': case 'V': case 'K': case 'J':
			if (cli_session_option(c, optarg, &so) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
		default:
			fprintf(c == 'h' ? stdout : stderr, "usage: %s folded [-o OUT] [--time S,E] [-C CPUS] [--symfs DIR] "
				"[--kallsyms F] [--vmlinux F] [--kcore DIR] [--jobs N] FILE\n"
				"  one line per stack, 'comm;outermost;...;leaf weight', as flamegraph.pl reads them:\n"
				"  from hardware trace, each call path's self time in ns; else samples per call chain\n",
				cli_prog);
			return c == 'h' ? EXIT_OK : EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_error("one input file expected");
		return EXIT_USAGE;
	}
	so.path = cli_perf_data_dir(argv[optind], &so);
	so.perf_export = 1;         /* symbol-less code named as in the database, so its calls agree */
	so.warn = cli_warn_cb;
	so.warn_ctx = &warnings;
	struct rb_folded *f = rb_folded_new();
	if (!f) {
		cli_error("out of memory");
		return EXIT_INTERNAL;
	}
	struct rb_sink sink;
	rb_folded_sink(f, &sink);
	struct rb_session_stats stats;
	struct pd_error err;
	int rc = rb_session_run(&so, &sink, &stats, &err);
	if (rc < 0 && rc >= PD_ERR_NOATTR) {
		cli_error("%s", err.msg);
		rb_folded_free(f);
		return cli_status_of(rc);
	}
	if (rc) {
		cli_error("out of memory while folding the stacks");
		rb_folded_free(f);
		return EXIT_INTERNAL;
	}
	if (stats.stop.code)
		cli_error("%s", stats.stop.msg);
	if (rb_folded_from_trace(f) && !rb_folded_weighs_time(f))
		cli_error("%s: the trace has no timing: stacks weigh the branches executed, not time", so.path);
	if (!rb_folded_lines(f))
		cli_error("%s: no samples and no calls from hardware trace: nothing to fold", so.path);
	int st = write_out(f, out);
	rb_folded_free(f);
	if (st)
		return st;
	return stats.stop.code || stats.malformed ? EXIT_PARTIAL : EXIT_OK;
}
